//! The scheduling policy: where a task goes and when it runs, and what
//! happens when a worker is stuck, every rule in the order it applies,
//! each with its constant, the reason for it and the function that
//! applies it (the code's comments cite the rules by these numbers). The
//! measurements behind the constants are in
//! `docs/decisions.md#design-choices`; `docs/design.md` ("The path of a
//! task") shows where each group of rules is applied, and links here for
//! the rules themselves.
//!
//! This file is layer 0: it imports nothing of the crate (only `std`), so
//! the driver, the yield queue, the task classes and the scheduler all read
//! their constants from it.
//!
//! # A. Where a task goes (the schedule hook)
//!
//! A spawn or a wake-up reaches `task::task_host::schedule`, then
//! `Shared::schedule_on_worker` or `schedule_off_workers`
//! (`runtime/scheduler/schedule.rs`), which ask `placement::place`
//! (`runtime/scheduler/placement.rs`): A1 to A6 are that one function, top to
//! bottom, and its tests are a table of these rules. (While the runtime
//! shuts down, a task goes nowhere: shutdown's drain cancels it.)
//!
//! - **A1. Off this runtime's workers** (another thread, a timer or I/O
//!   harvested by a non-worker, another runtime's worker): the injector.
//!   One shared queue every worker looks at (B3, B6).
//! - **A2. Classify the wake** (`task/class.rs`): a [`TaskClass::Auto`]
//!   task that woke only itself [`DEMOTE_AFTER`] times in a row is
//!   *demoted* to background; its next wake by anything else promotes it.
//!   Why: a loop around `yield_now()` is background work; demoted, its
//!   units step aside while other work waits instead of queueing ahead of
//!   foreground tasks woken after them.
//! - **A3. A background self-wake** (of a demoted `Auto` task or a
//!   `Background` one; not a deferred wake-up handed back, B9) asks
//!   `Core::background_turn` (`runtime/scheduler/worker/step_aside.rs`), in this
//!   order: steps aside while E3 paces (unless aborted or queued already);
//!   runs on if a worker is idle, the task was aborted, it already has a
//!   yield-queue entry, or it holds a rescue slice (B2); *steps aside* into
//!   its worker's shard of the yield queue if the worker's deque (or
//!   run-next slot) or the injector holds a task; *takes turns* with the background tasks in its
//!   worker's shard after [`TURN_AFTER_SELF_WAKES`] self-wakes; and, at the
//!   first self-wake of an epoch, steps aside if the yield queue holds
//!   anything, the epoch's I/O poll woke a task here, or another worker
//!   needs help (C5's rule). Otherwise it runs on (A4).
//! - **A4. A self-wake** (`yield_now`, a move to the back;
//!   `placement::self_wake_spot`): the back of this worker's deque, and
//!   the next tick looks at the injector first (B3): a task that gives way
//!   gives way to work from outside too. On a current-thread runtime, the
//!   next turn of its loop (after the `block_on` future, if woken).
//! - **A5. An `Auto` or `Foreground` task spawned or woken by another
//!   task's poll** on this worker (`Core::may_run_next`,
//!   `runtime/scheduler/worker/run_next.rs`): its *run-next slot*, the
//!   one task it runs after the poll; a second one displaces the first to
//!   the deque. Why: the task the poll's output is for runs while its data
//!   is in the cache (docs/decisions.md#run-next-slot). Never on a
//!   current-thread runtime, inside `block_in_place`, or for a task woken
//!   while the worker waits in the driver.
//! - **A6. Any other task on a worker**: the back of its deque, with a
//!   notification of an idle worker (`Idle::notify_one`). Two exceptions
//!   hold the notification back:
//!   - tasks woken while this worker dispatches driver events from its own
//!     park (it runs them itself; it wakes one helper if more than one
//!     came), or while it serves the poll for an idle worker that does not
//!     run (C1);
//!   - a spawn into an *empty* deque, and a task in the run-next slot
//!     (A5): this worker runs it as soon as the poll ends. If the poll goes
//!     on instead, the task is announced (and a run-next task opened to
//!     stealers) by one of three paths: the poll's next idle check on the
//!     fast path (C1), its entry into `block_in_place`, or the monitor's
//!     next sample (`runtime/scheduler/worker/spawned.rs`). Why: a chain of spawns
//!     stays on one worker instead of waking a sleeper per link
//!     (docs/decisions.md#spawn-empty-deque).
//!
//! # B. When it runs (`Core::next_task`, once per tick)
//!
//! - **B1. Driver poll** (`Driver::poll_nonblocking`, `Core::poll_for_epoch`).
//!   Every [`EVENT_INTERVAL`] ticks, a non-blocking
//!   poll of I/O and timers; otherwise at the first tick of each epoch
//!   (2^[`EPOCH_SHIFT`] ns) the runtime's one poll for that epoch, or, while
//!   a worker watches the driver, the check that it serves (C1's crowded
//!   host).
//! - **B2. Rescue** (`Core::rescue_overdue`: `rescue_starving`, then
//!   `floor_turn`). At the first tick of an epoch: if the yield queue's
//!   head has waited longer than `max_yield_delay`
//!   ([`DEFAULT_MAX_YIELD_DELAY`]) and nobody took an entry out the usual
//!   way for as long, this worker takes it, ahead of everything else, and
//!   the task runs as if nothing waited for [`RESCUE_SLICE`]; until an
//!   entry is served the usual way, the queue stays starving and the next
//!   rescue needs no wait; rescues are spaced so that they take at most
//!   [`RESCUE_SHARE_PERCENT`] of the workers (`yield_queue/rescue.rs`, `runtime/scheduler/worker/yielded.rs`). Why: the
//!   yield queue must not starve under a flood (docs/results.md#flood).
//!   Then, with a floor set (`Builder::background_floor`, `F`; default
//!   none), the **floor's turn**: each worker owes background work `F` of
//!   its time while such work waits; once it owes [`FLOOR_SLICE`], it takes
//!   its own shard's head ahead of everything else for a [`FLOOR_SLICE`]
//!   slice (`runtime/scheduler/worker/floor.rs`). Why: a bulk job with a deadline
//!   needs a share under a foreground that never lets up
//!   (docs/results.md#background-floor).
//! - **B3. Injector first** (`Core::take_from_injector`), every [`GLOBAL_QUEUE_INTERVAL`] ticks or on
//!   the tick after a self-wake (A4): a deque that refills itself never
//!   starves tasks spawned from outside.
//! - **B4. Run-next slot** (A5; `Core::next_from_run_next`), at most [`MAX_RUN_NEXT_STREAK`] tasks in a
//!   row; the next goes to the back of the deque. Why: two tasks waking
//!   each other would otherwise hold the worker for ever.
//! - **B5. Own deque**, FIFO (`LocalQueue::pop`).
//! - **B6. Injector** (`Core::take_from_injector`), taking a batch into the own deque.
//! - **B7. Own-shard take-back** (`Core::take_back_own_yielded`,
//!   `runtime/scheduler/worker/mod.rs`), by a worker that is not searching (and not
//!   while E3 paces): if its own shard of the yield queue holds entries,
//!   the yield queue in B9's order (its own shard's head first; after the
//!   epoch's I/O look), unless another worker's deque holds work its owner
//!   is not getting to (`Core::others_need_help`: a backlog, or a task
//!   while the owner made no progress since this worker's last look; a
//!   look that found no help needed holds for the rest of its epoch). Why:
//!   becoming a searcher at each turn of a background task costs two
//!   `SeqCst` read-modify-writes on the word every worker reads
//!   (docs/decisions.md#scaling-4-8-16). Why not "any task in another deque": a
//!   lone task in a busy worker's deque is the task that worker runs next,
//!   and taking it would move tasks between workers at every turn (the
//!   same rule decides C5's and A3's step aside for other workers' work,
//!   so the three agree; docs/decisions.md#figures-from-comments).
//! - **B8. Steal**, as a *searcher*: at most [`max_searching`] workers
//!   search at once (half, rounded up); a searcher takes half of a random
//!   victim's deque, or a victim's run-next task once it is open (A6), or
//!   a batch of the injector (`runtime/scheduler/worker/steal.rs`, `runtime/scheduler/idle.rs`).
//!   Why: a cap keeps stealing from becoming a stampede.
//! - **B9. Yield queue**, only for a searcher that found nothing, after a
//!   look at I/O unless a worker looked in this epoch: its own shard's head
//!   first, unless another shard's head has waited longer by more than an
//!   epoch (compared once per epoch), then the oldest it may take; another
//!   worker's *lone* entry only after [`OWNER_GRACE_NANOS`], a backlog at
//!   once (`YieldQueue::pop_for`, `may_take`; `runtime/scheduler/worker/yielded.rs`).
//!   A deferred wake-up is delivered so that the task is handed straight
//!   back to this worker. Why the grace: the owner takes its background
//!   task back a moment later, and moving it between threads moves the
//!   roles the OS has settled (docs/decisions.md#owner-grace).
//! - **B10. Elastic idle grant**, reached only as B9 is (by a searcher
//!   that found nothing, and not while E3 paces): an elastic task waiting
//!   for admission tokens, unless it is coarse or
//!   `ElasticConfig::use_idle_workers` is off, runs on CPU nobody else
//!   wants (`admission/mod.rs`, `take_for_idle_worker`).
//! - **B11. Park** (`Idle::wait_for_work`): count itself idle, re-check
//!   every queue (open run-next slots, the yield queue as B9 may take it,
//!   elastic idle work), then sleep inside the driver's poll if nobody
//!   watches it, else on its own condvar until the next timer; either way
//!   no longer than until another worker's lone entry's grace ends (B9)
//!   or, while E3 paces, the pacing window ends.
//!   The timeout is `Core::occupied_timeout` (`runtime/scheduler/worker/mod.rs`; with
//!   the clock paused it sleeps until woken, and wakes the watcher first:
//!   `runtime/scheduler/auto_advance.rs`).
//!
//! A current-thread runtime runs the same steps on its `block_on` thread,
//! without B4 (no run-next slot) and with no other worker to steal from,
//! and polls a woken `block_on` future after at most
//! [`CURRENT_THREAD_TASKS_PER_TURN`] tasks (`runtime/scheduler/worker/block_on.rs`).
//!
//! # C. While it runs (`yield_if_busy()`)
//!
//! - **C1. Fast path** (`context::may_skip_yield`, `yield_if_busy.rs`;
//!   its once-per-epoch check `Core::recheck_idle`): a worker is idle
//!   and nothing holds attention: continue. About once per epoch (the
//!   clock read at most [`MAX_CALLS_BETWEEN_READS`] calls apart; the
//!   back-off lives in `metrics/long_poll.rs`, `PollRecord::fast_path_point`)
//!   it announces a held-back spawn (A6) and checks the idle worker serves:
//!   if I/O or a timer stayed pending, unharvested, at checks
//!   [`UNSERVED_EPOCHS`] epochs apart (the watcher was woken and not run: a
//!   crowded host), this worker harvests it, moves the task to the back,
//!   and serves the poll at every epoch until the watcher runs again
//!   ([`RELIEF_NANOS`]); while nothing is pending the check backs off to
//!   every 2^[`MAX_QUIET_SHIFT`] epochs (`runtime/scheduler/worker/serving_check.rs`,
//!   `driver/mod.rs`). Why: on a crowded host the woken worker may wait a
//!   scheduler tick for a core. The price is the busy worker's background
//!   task's CPU;
//!   `Builder::crowded_host_handoff(false)` turns the check off
//!   (docs/decisions.md#handoff-setting).
//!   Under a CPU limit whose window is spent (E3), that once-per-epoch
//!   check takes the slow path instead, which steps the task aside.
//! - **C2. Give way at once** on shutdown or abort
//!   (`Core::step_aside_or_continue`, `runtime/scheduler/worker/step_aside.rs`).
//! - **C3. Elastic grant** used up (`ElasticPoll::at_yield_point`): give
//!   way, back through admission (`admission/elastic_poll.rs`), after ending the slot's cover if a
//!   spare covered it (F7, F8). Otherwise, with a worker idle, an
//!   elastic task continues, after the fast path's once-per-epoch I/O
//!   poll (which it skipped): if that woke a task here, it moves to the
//!   back instead. (Before C3: C2, then E3's step aside while the CPU
//!   limit's window is spent; `Core::step_aside_or_continue`.)
//! - **C4. Continue** (`Core::step_aside_or_continue`) while a worker is idle (the fast path fell through
//!   only because an abort elsewhere holds attention), or while the task
//!   holds a rescue slice (B2).
//! - **C5. Decide** (`Core::decide`, `runtime/scheduler/worker/step_aside.rs`): on
//!   a current-thread runtime, the `block_on` future or a task that
//!   yielded this turn is ready: *move to the back*; the
//!   own deque holds a task: *move to the back* (or *step aside* if this
//!   task moved to the back last time: the sentinel); the injector holds a
//!   task: *step aside*; then, once per epoch: the epoch's I/O poll woke a
//!   task here: move to the back; the injector holds a task (again, after
//!   that poll), another worker needs help (`others_need_help`, as B7) or
//!   the yield queue is overdue (B2): step aside; otherwise continue. *Step aside* defers the task's own waker
//!   into its worker's shard of the yield queue and wakes nobody; a
//!   foreign waker (a combinator's, a nested executor's) is woken at once.
//!
//! - **C6. The cooperative budget** (`task/coop.rs`,
//!   `Core::budget_work_waits` in `runtime/scheduler/worker/budget.rs`): each poll
//!   of a task may spend
//!   [`COOP_BUDGET`] units; every brigade resource (sockets, timers,
//!   signals, join handles, stdio) spends one when it makes progress. Once
//!   they are spent, the next resource asks whether work waits for this
//!   worker, in this order: a sibling in the task's `LocalSet` waits
//!   (yes); the poll runs inside `block_in_place`, or the task holds a
//!   rescue slice, B2 (no); the task was aborted or the runtime shuts
//!   down, a task in its deque or run-next slot or in the injector, the
//!   `block_on` future or a yielded task on a current-thread runtime,
//!   and, once per epoch (a gate of its own), a due timer or unharvested
//!   I/O (the epoch's driver poll) (yes). If so
//!   it wakes the task's own waker and returns `Pending`, and the task goes
//!   to the back of the deque (A4's place), without counting as a
//!   self-wake (A2): a foreground task stays foreground. If not (or the
//!   waker is a combinator's or a nested executor's), the budget is
//!   refilled and the operation goes on. Why: a task whose socket is
//!   always ready never returns `Pending` on its own, and would starve its
//!   worker's timers, I/O and tasks; asking first keeps an always-ready
//!   loop alone on an idle runtime at full speed
//!   (docs/results.md#coop-budget).
//!
//! # D. Where a worker runs (the monitor thread)
//!
//! - **D1. Spread stacked workers** (`Spreader::sample`,
//!   `runtime/threads/spread.rs`, at each of the monitor's samples, F1): two workers
//!   runnable on one CPU at [`SPREAD_AFTER_SAMPLES`] of the monitor's
//!   samples in a row, while a CPU of the later one's mask holds no
//!   runnable worker and was idle [`SPREAD_IDLE_PERCENT`]% of the last
//!   [`SPREAD_PAUSE`] or more: the monitor moves that worker there (its
//!   mask set to that CPU, then given back), at most once per
//!   [`SPREAD_PAUSE`]. Not onto a CPU another process keeps busy: the
//!   worker would get half of it there too. Why: a
//!   worker with background work never sleeps, and the kernel places a
//!   thread mostly as it wakes; on a small host its balancer can leave two
//!   such workers on one CPU for seconds while another idles
//!   (docs/decisions.md#two-workers-one-cpu).
//!   `Builder::spread_workers(false)` turns it off.
//!
//! # E. Inside a CPU limit (`runtime/cpu_limit/`)
//!
//! - **E1. The limit** (`CgroupFiles::read_limit`, `cpu_limit/cgroup.rs`;
//!   `LimitReader::tick`; `Builder::cpu_limit`): the
//!   tightest CFS quota over the building thread's cgroup and its
//!   ancestors (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us`), read at
//!   build from files opened then, and again by the monitor at most once
//!   per [`LIMIT_REREAD`]; or a fixed value.
//! - **E2. Size the workers** (`cpu_limit/mod.rs`, `workers_for`): by
//!   default as many workers as the limit rounded up (1.5 → 2), capped by
//!   the CPUs the affinity mask allows; an explicit `worker_threads` wins.
//!   While the limit is below the worker count, the workers past it park
//!   (`Core::park_by_limit`, `runtime/scheduler/worker/park_by_limit.rs`), handing
//!   their tasks to the injector, and do not count as idle: an idle
//!   worker is one that would serve. Why: `available_parallelism` rounds
//!   down (1.5 → 1), leaving a third of a 1.5-CPU quota unused.
//! - **E3. Pace background work** (`Pacer::over_budget`,
//!   `cpu_limit/pacer.rs`; asked through `Core::is_paced`): each
//!   [`PACING_WINDOWS_PER_PERIOD`]th of the kernel's period, background
//!   work (tasks at `yield_if_busy()`, self-waking background tasks, the
//!   yield queue, elastic idle grants, floor turns) runs until the process
//!   has used its target share ([`MAX_TARGET_PERMILLE`] of the window's
//!   quota at most) less a reserve for requests and less what earlier
//!   windows used beyond their share (their debt), read from the process's
//!   CPU clock at most every [`READ_EVERY_NANOS`]; then it waits until the
//!   window ends, and workers with nothing else park (never spin).
//!   Requests are never paced. A throttled period all the same lowers the
//!   target by [`TARGET_BACKOFF_PERMILLE`] (to [`MIN_TARGET_PERMILLE`]);
//!   each [`TARGET_RECOVERY_AFTER`] without raises it by [`TARGET_RECOVERY_PERMILLE`];
//!   throttling in the first [`THROTTLING_GRACE_PERIODS`] periods after build
//!   or a change of the limit does not count (`LimitReader::answerable`). Why:
//!   once the period's quota is spent the kernel stops every thread until
//!   the next period (50 ms at 0.5 CPU), so a request arriving then waits
//!   that long however well the background yields
//!   (docs/results.md#cpu-limit). Elastic admission's capacity is the limit.
//!
//! # F. A stuck worker (compensation, `runtime/compensation/`)
//!
//! A worker is *stuck* while one *stretch* of a poll (the poll, or the
//! part of it between two yield points) runs on: a blocking call from
//! async code, or a computation with no yield point. Compensation starts a
//! *spare* worker to serve in its place; the stuck thread keeps its slot,
//! and only tasks move, through the deques' stealers.
//!
//! - **F1. The sample** (`monitor::sample_interval`, `runtime/threads/monitor.rs`):
//!   the monitor samples the workers' poll records every half
//!   `Builder::long_poll_threshold` ([`DEFAULT_LONG_POLL_THRESHOLD`]), or
//!   every `Builder::compensation_threshold`
//!   ([`DEFAULT_COMPENSATION_THRESHOLD`]) if that is sooner; with both off,
//!   never. At each sample, in this order: the long-poll detector's check,
//!   the announcement of spawns held back by polls still running (A6:
//!   their run-next slots are opened, so they count as waiting work), the
//!   sweep of ended covers (F7), compensation (F2–F5), and the spreading
//!   of stacked workers (D1). Why not half the compensation threshold: a
//!   stuck worker is then compensated within twice the threshold rather
//!   than 1.5 times, but the monitor wakes no more often than the
//!   long-poll detector alone makes it; each wake-up on a saturated
//!   machine preempts a worker (docs/decisions.md#stuck-workers).
//! - **F2. A stretch past the threshold** (`decide::compensate`,
//!   `runtime/compensation/decide.rs`): a slot whose stretch has run for
//!   the compensation threshold or longer, not covered already, while no
//!   worker is idle and work waits (a task in the injector, a deque, an
//!   open run-next slot or the yield queue). Seeing none, the monitor
//!   first polls the driver once, without blocking, unless a worker waits
//!   in its poll. Then it asks the judge (F3). Why the poll: with every
//!   worker busy nobody sleeps in the driver, so a request on a readable
//!   socket or a due timer queues no task until someone polls.
//! - **F3. Blocked or runnable** (`StuckJudge::judge`, `decide.rs`): the
//!   stuck thread's state, from its `/proc/self/task/TID/stat`. Not
//!   runnable (sleeping in a system call or a wait), or unknown: *blocked*,
//!   compensated at once. Runnable: judged at the next sample of the same
//!   stretch, from its CPU clock: moved by less than
//!   1/[`DESCHEDULED_ON_CPU_DIVISOR`] of the wall time between the two
//!   samples, it is *descheduled* (waiting for a CPU), never compensated
//!   (counted in `RuntimeMetrics::descheduled_stretches`);
//!   otherwise *CPU-bound*, compensated only while the host has an idle
//!   CPU (fewer threads runnable on the host, per `/proc/loadavg`, the
//!   monitor left out, than this process may use). A runnable stretch is
//!   judged anew at every sample. Why: wall time alone cannot tell a
//!   blocked worker from a descheduled one; on a crowded host a runnable
//!   worker can wait several milliseconds for a CPU slice, and a spare
//!   started for it only crowds the host further (brigade issue #24).
//!   `/proc/loadavg` does not see a container's CPU quota: under one, the
//!   judge tends to find no idle CPU and leaves CPU-bound stretches
//!   uncompensated, as it does without `/proc/loadavg`.
//!   The files are open before they are read (`StatFiles::open_own`,
//!   `compensation/stat_files.rs`): each worker thread opens its own as it
//!   starts, and `build` waits for the primaries' (at most
//!   [`PRIMARIES_STAT_FILES_TIMEOUT`]); a slot without one is judged by
//!   wall time alone, as blocked. Why: reading then opens no descriptor,
//!   so a program that has used up its descriptors never sees one taken
//!   and given back behind its back.
//! - **F4. The cover** (`Compensation::cover_running`,
//!   `compensation/mod.rs`): the monitor *covers* the slot, asking for a
//!   spare in its place, with the stretch's poll sequence number as its
//!   tag; one cover per slot. If the stretch ended as the cover landed, it
//!   takes the cover back. Each cover is logged at info level (target
//!   `brigade::compensation`). Why the tag: the monitor ends only its own
//!   covers, never `block_in_place`'s (F6); why the take-back: a worker
//!   that parks never keeps a cover.
//! - **F5. A spare starts** (`Compensation::start_spare`,
//!   `compensation/spare_slots.rs`, called by `worker::spare_threads::start_spares`):
//!   while fewer spares serve than slots are covered, within
//!   `Builder::max_spare_workers` (default: as many as the workers; 0 turns
//!   compensation off, `block_in_place` included). A resting spare thread
//!   serves again first, else a new thread starts on a vacant spare slot;
//!   a thread that could not start is retried at every sample. Each start
//!   is counted in `RuntimeMetrics::compensations`. A stuck worker found
//!   while every spare serves stays stuck, with a warning once per spell.
//!   A serving spare is a worker like any other (B1–B11, stealing from the
//!   stuck slot's deque too). Why the bound: at most `worker_threads +
//!   max_spare_workers` threads run tasks.
//! - **F6. `block_in_place`** (`Core::block_in_place`,
//!   `runtime/scheduler/worker/mod.rs`): covers its own slot at once, for the length
//!   of its closure (taking over a monitor's cover, which the monitor's
//!   sweep then cannot end), and starts a spare as F5; a spawn it held back
//!   (A6) is announced first, and the closure's blocking ends the stretch,
//!   so it is not reported as a long poll (the blocking is declared). Nested,
//!   it just runs the closure; with `max_spare_workers(0)`, it runs it
//!   without a cover. On a current-thread runtime it panics, as tokio's
//!   does: nobody could take its thread's place.
//! - **F7. The cover ends when the stretch does**: the monitor ends its
//!   own covers whose stretch has ended (the poll returned or passed a
//!   yield point) at its next sample (`Compensation::end_stale_covers`);
//!   the slot's own thread ends any cover (`Core::end_cover`) before it
//!   parks (B11, or for the CPU limit, E2), after an elastic poll and at
//!   an elastic task's yield point (C3), at the end of `block_in_place`,
//!   and as its loop stops. Plain polls and `yield_if_busy()`'s fast path
//!   do not look. Why: they stay as cheap as without compensation, at the
//!   price of a spare serving at most one sampling interval longer than
//!   needed.
//! - **F8. The CPU charge of a covered stretch** (`CoverEnded::uncharged`,
//!   `compensation/mod.rs`): of an elastic poll covered from the cover's
//!   start (or the poll's, if later) to its end, only the CPU time its
//!   thread used is charged to elastic admission; the rest of the wall
//!   time is not. With the CPU time unknown, the stretch is charged in
//!   full. Why: a thread blocked in a system call uses no CPU; one whose
//!   CPU time is unknown may have been a CPU loop.
//! - **F9. A spare steps down** (`Compensation::try_step_down`, asked by
//!   `Core::work` between two tasks): while more spares serve than slots
//!   are covered. It leaves the search and hands every task in its deque
//!   and run-next slot to the injector, then rests. A sleeping spare is
//!   woken when a cover ends (`Idle::notify_spare`) to find out. Why: once
//!   every stuck poll has returned, the runtime runs its configured number
//!   of workers again.
//! - **F10. A spare rests, then exits** (`Compensation::rest`,
//!   `spare_slots.rs`): a spare thread that stepped down waits, for at most
//!   `Builder::thread_keep_alive` ([`DEFAULT_THREAD_KEEP_ALIVE`]), to serve again for
//!   another stuck worker (F5), and exits when it runs out or at shutdown;
//!   shutdown waits for the spare threads (`runtime/lifecycle/shutdown.rs`, step 4).
//!   Why the rest: another worker may get stuck soon, and a resting thread
//!   serves again without a thread start.
//!
//! # G. Elastic admission (`admission/`, `spawn_elastic`)
//!
//! - **G1. The controller** (`Controller::tick`, `admission/controller.rs`),
//!   on the monitor thread every [`ELASTIC_SAMPLE_PERIOD`]: the p99
//!   scheduling latency over the last [`ELASTIC_WINDOW`] above
//!   [`ELASTIC_TARGET`] lowers the elastic CPU limit by
//!   [`ELASTIC_DECREASE_FACTOR`] steps (within one window of a cut, only
//!   if the window's last fifth is above the target too); otherwise,
//!   while elastic tasks wait for admission, it raises the limit a step;
//!   otherwise the limit decays by [`ELASTIC_INACTIVE_DECREASE`] of a step
//!   towards [`ELASTIC_INACTIVE_POINT`] of its range. A step is
//!   [`ELASTIC_ADJUSTMENT_PER_SECOND`] times the sample period; the limit
//!   stays within [`ELASTIC_MIN_UTILIZATION`] to
//!   [`ELASTIC_MAX_UTILIZATION`]. These are `ElasticConfig`'s defaults.
//!   Why: CockroachDB's elastic CPU controller; the guard keeps a spike
//!   the window still remembers from being answered twice
//!   (docs/decisions.md#design-choices).
//! - **G2. The token bucket** (`Admission::refill`, `admission/mod.rs`):
//!   refilled at the limit times the capacity (the workers, or the CPU
//!   limit, E2) in CPU-seconds per second; each admission lets an elastic
//!   task run for [`ELASTIC_GRANT`] of CPU before C3 ends its grant. Debt
//!   older than [`FORGIVE_DEBT_EVERY`] is forgiven.
//!
//! [`TaskClass::Auto`]: crate::task::TaskClass::Auto

use std::time::Duration;

/// A2: how many self-wakes in a row demote a `TaskClass::Auto` task.
///
/// Four: a request handler that yields once or twice while serving one
/// request stays foreground, while a loop around `yield_now()` is demoted
/// after its fourth unit. Demoting early costs little (a demoted task only
/// steps aside while other work waits, and its next external wake promotes
/// it); demoting late lets each of its units queue ahead of foreground tasks
/// woken after it. (`task/class.rs`.)
pub(crate) const DEMOTE_AFTER: u32 = 4;

/// A3: how many self-wakes of background tasks a worker lets run on, while
/// other background tasks wait in its shard of the yield queue, before the
/// next one takes its turn behind them (counted in `Core::background_turn`,
/// carried out by `Core::take_turns`); the epoch
/// ends a turn too, if it comes first.
///
/// Not 1, as each `yield_now()` is in tokio: a turn through the shard (its
/// lock held for a pop and a push) costs about a third of a whole yield.
/// Nor the epoch alone: many demoted loops of tiny units then finish one by
/// one, an epoch apart, waking whoever waits on them once each. With 64
/// they finish close together; a loop whose units take 0.5 µs or more
/// reaches the epoch first. docs/decisions.md#figures-from-comments.
pub(crate) const TURN_AFTER_SELF_WAKES: u32 = 64;

/// B1: how many ticks a busy worker runs between non-blocking driver polls.
///
/// A fixed 61 ticks, not tuned at run time: often enough that a busy
/// runtime handles I/O in batches on the workers themselves (no thread
/// hop), rarely enough that the `epoll_wait` syscall, which costs as much as
/// a short poll, is paid once per 61 ticks. Latency under saturation does
/// not depend on it: the epoch poll (B1) and `yield_if_busy()`'s (C5) bound
/// that. (`runtime/scheduler/worker/mod.rs`, `Core::next_task`.)
pub(crate) const EVENT_INTERVAL: u32 = 61;

/// B1, B2, C1, C5: log2 of the epoch length in nanoseconds: 2^15 ns ≈ 33 µs.
///
/// When every worker is busy, the epoch bounds how late a network-woken
/// task is noticed, so it sets the foreground latency floor; the price is
/// one non-blocking `epoll_wait` per epoch per runtime and one clock read
/// per epoch per busy worker (or per [`MAX_CALLS_BETWEEN_READS`] calls).
/// CockroachDB's `runtime.Yield` uses 2^18 ns; docs/decisions.md#design-choices
/// has the comparison. (`epoch.rs`.)
pub(crate) const EPOCH_SHIFT: u32 = 15;

/// C1, and every epoch gate: the most calls a gate lets pass between two
/// clock reads. At high call rates the clock is read once per 1024 calls
/// (as CockroachDB's `yieldchecks` word does), so a task whose calls
/// suddenly slow down is noticed at most 1024 calls late. (`epoch.rs`.)
pub(crate) const MAX_CALLS_BETWEEN_READS: u64 = 1024;

/// B2: the default of [`Builder::max_yield_delay`](crate::Builder::max_yield_delay):
/// how long the yield queue's head may wait, with nobody serving the queue,
/// before a worker rescues it.
pub const DEFAULT_MAX_YIELD_DELAY: Duration = Duration::from_millis(50);

/// B2: how long a rescued task runs as if nothing waited: the longest a
/// request queued behind it on that worker waits for it. One poll per
/// rescue would not be enough (a task with 50 µs units would get 50 µs per
/// rescue); 1 ms slices made a closed loop's p99 (wrk, 64 connections)
/// about 1.5× tokio's, 250 µs ones level with it at the same share
/// (docs/decisions.md#rescue-slices). (`yield_queue/rescue.rs`.)
pub(crate) const RESCUE_SLICE: Duration = Duration::from_micros(250);

/// B2 (the floor's turn): how long a floor turn runs its task as if nothing
/// waited, and the debt at which a turn is due. Long enough that a turn's
/// cost (a pop, a wake-up, the task's cache) is small next to it; short
/// enough that a request waiting behind it is delayed by a fraction of a
/// millisecond. (`runtime/scheduler/worker/floor.rs`.)
pub(crate) const FLOOR_SLICE: Duration = Duration::from_micros(250);

/// B2 (the floor's turn): the most debt or credit a worker's floor account
/// holds, in slices: neither background time that ran for free (an idle
/// worker's) nor a stretch with nothing to give is banked for long, so the
/// floor is a share over about a millisecond. (`runtime/scheduler/worker/floor.rs`.)
pub(crate) const FLOOR_MAX_BALANCE_SLICES: i64 = 4;

/// B2: the most of the workers' time that rescues may take, in 1/100:
/// foreground work keeps at least 96% of the workers however many tasks
/// starve. (`yield_queue/rescue.rs`.)
pub(crate) const RESCUE_SHARE_PERCENT: u64 = 4;

/// B3: how many ticks (tasks taken) between two forced looks at the
/// injector.
///
/// A fixed 61 ticks: it bounds how long an injected task can wait behind a
/// self-refilling local deque to 61 polls, costs one failed injector check
/// per 61 polls when there is nothing to find, and, being prime, rarely
/// falls into step with a workload's own period. (It equals
/// [`EVENT_INTERVAL`], so both fall on the same tick.) Tokio now tunes its
/// interval from the mean poll time; brigade keeps a fixed count, one
/// modulo on the hot path, and spaces by time the checks that need it (B1,
/// B2) with the epoch. (`runtime/scheduler/worker/mod.rs`.)
pub(crate) const GLOBAL_QUEUE_INTERVAL: u32 = 61;

/// B4: how many tasks in a row a worker takes from its run-next slot before
/// it takes the front of its deque: tokio's bound for its LIFO slot. One
/// `ping_pong` round is two slot runs (the ponger, then the pinger).
/// (`runtime/scheduler/worker/run_next.rs`.)
pub(crate) const MAX_RUN_NEXT_STREAK: u32 = 3;

/// B8: how many workers may search (steal) at once, for `num_workers`
/// primaries: half of them (of at least two), rounded up, as tokio does.
/// (`runtime/scheduler/idle.rs`.)
pub(crate) fn max_searching(num_workers: usize) -> usize {
    num_workers.max(2).div_ceil(2)
}

/// B9, B11: how long a lone entry in a worker's shard of the yield queue is
/// left for that worker to take back before another worker may take it:
/// 2^18 ns (8 epochs, about a quarter of a millisecond), several times what
/// a worker takes to run the request it stepped aside for. (2^20 ns served
/// `kv` no better and let a crowded host's sleeping worker sleep longer:
/// docs/decisions.md#owner-grace.) (`yield_queue/mod.rs`, `may_take`.)
pub(crate) const OWNER_GRACE_NANOS: u64 = 1 << 18;

/// C1: how many epochs work must stay pending, unharvested, between two
/// checks before a busy worker serves it for a watcher it is not relieving:
/// 16, about half a millisecond. A watcher that the kernel runs harvests
/// within microseconds of being woken, so a poll left that long is one
/// whose watcher has not run; a single sighting may be work that arrived
/// just now. Why not sooner: each hand-off moves requests onto the busy
/// worker, and with them the CPU its background task would have had; half
/// a millisecond is still well inside the scheduler tick that a woken
/// worker may wait on a crowded host (docs/decisions.md#later-handoff).
/// (`driver/mod.rs`, `UnservedProbe`.)
///
/// Under loom, 2: the models walk every epoch up to the hand-off, and the
/// rule is the same at any length.
#[cfg(not(loom))]
pub(crate) const UNSERVED_EPOCHS: u64 = 16;
#[cfg(loom)]
pub(crate) const UNSERVED_EPOCHS: u64 = 2;

/// C1: the longest back-off of the crowded-host check while nothing is
/// pending: a check every 2^3 epochs. (`driver/mod.rs`, `UnservedProbe`.)
pub(crate) const MAX_QUIET_SHIFT: u32 = 3;

/// C1: how long the watcher's relief lasts past its grant (a busy worker
/// found the watcher not serving and served the poll in its place): 0, so
/// it ends at the watcher's next wait, which watches the epoll descriptor
/// again as soon as the kernel runs it; until then busy workers serve at
/// every epoch. A longer relief (2^20 ns, with the watcher off the
/// descriptor meanwhile) kept the busy worker serving the requests long
/// after the watcher could have, at the cost of the background task there
/// (docs/decisions.md#later-handoff). (`driver/mod.rs`, `Relief`.)
pub(crate) const RELIEF_NANOS: u64 = 0;

/// C6: the units of the cooperative budget a task's poll may spend before
/// its resources ask whether work waits (`task/coop.rs`): 128, tokio's
/// budget, so that code tuned for tokio's yield points sees the same
/// spacing. The ask costs little (a few loads; the driver poll at most once
/// per epoch), so the count only bounds how often it runs: once per 128
/// ready operations, a few microseconds of I/O.
pub(crate) const COOP_BUDGET: u8 = 128;

/// D1: how many of the monitor's samples in a row (5 ms apart by default:
/// half `Builder::long_poll_threshold`) must find the same two workers
/// runnable on one CPU before one is moved: 4, about 15–20 ms. The kernel's own balancer usually spreads them within a
/// few milliseconds; a pair it has left for 20 ms is one it is not getting
/// to, and a move costs the worker one migration. (`runtime/threads/spread.rs`.)
#[cfg_attr(loom, allow(dead_code))] // The monitor reads it; loom models leave the monitor out.
pub(crate) const SPREAD_AFTER_SAMPLES: u32 = 4;

/// D1: the shortest time between two moves, so that the monitor and the
/// kernel's balancer do not take turns moving the same thread; also the
/// shortest window over which a CPU's idle time is read from `/proc/stat`
/// (whose clock ticks are 10 ms). (`runtime/threads/spread.rs`.)
#[cfg_attr(loom, allow(dead_code))] // The monitor reads it; loom models leave the monitor out.
pub(crate) const SPREAD_PAUSE: Duration = Duration::from_millis(100);

/// D1: how idle a CPU must have been, in percent of the window's whole
/// clock ticks, for a worker to be moved there: 10, one tick of 10 in a
/// window of 100–110 ms. A CPU that a busy neighbour keeps reads 0 (or now
/// and then one tick, where the neighbour is not quite always busy); the
/// one that the kernel left idle
/// beside two stacked workers read 11–34%
/// (docs/decisions.md#two-workers-one-cpu). (`runtime/threads/spread.rs`.)
#[cfg_attr(loom, allow(dead_code))] // The monitor reads it; loom models leave the monitor out.
pub(crate) const SPREAD_IDLE_PERCENT: u64 = 10;

/// E1: how often the monitor reads the cgroup's CPU limit again (from the
/// files opened at build): a live resize (Kubernetes' in-place resize) is
/// in force within about this long; also how long a worker parked by the
/// limit (E2) sleeps between looks. (`runtime/cpu_limit/limit_reader.rs`,
/// `LimitReader`.)
#[cfg_attr(loom, allow(dead_code))] // The monitor reads it; loom models leave the monitor out.
pub(crate) const LIMIT_REREAD: Duration = Duration::from_secs(1);

/// E3: pacing windows per kernel period (10 ms windows for the default
/// 100 ms period): short enough that a request never meets a period whose
/// quota is spent, long enough that a window's budget holds several
/// background units. Usage is front-loaded in each window, so a period,
/// wherever its boundaries fall, holds at most this many windows' budgets.
/// (`runtime/cpu_limit/pacer.rs`.)
pub(crate) const PACING_WINDOWS_PER_PERIOD: u64 = 10;

/// E3: the least time between two reads of the process's CPU clock (a
/// system call that sums every thread's time, about a microsecond):
/// 250 µs, so the budget is overrun by at most that much CPU per worker.
/// (`runtime/cpu_limit/pacer.rs`.)
pub(crate) const READ_EVERY_NANOS: u64 = 250_000;

/// E3: the most of each window's quota the process may use, in 1/1000:
/// 95%, leaving room for the threads and time the process clock sees late
/// (the monitor, the kernel's accounting of a slice).
pub(crate) const MAX_TARGET_PERMILLE: u64 = 950;

/// E3: the least the target goes down to after throttled periods.
pub(crate) const MIN_TARGET_PERMILLE: u64 = 500;

/// E3: how far one throttled period lowers the target.
pub(crate) const TARGET_BACKOFF_PERMILLE: u64 = 50;

/// E3: how far each second without a throttled period raises it.
pub(crate) const TARGET_RECOVERY_PERMILLE: u64 = 10;

/// The current-thread flavour of B1–B11: how many tasks a turn of the
/// `block_on` thread's loop runs at most before it polls a woken `block_on`
/// future: tokio's event interval, [`EVENT_INTERVAL`].
/// (`runtime/scheduler/worker/block_on.rs`.)
pub(crate) const CURRENT_THREAD_TASKS_PER_TURN: u32 = EVENT_INTERVAL;

/// How many queued tasks one turn of a `LocalSet` runs at most before it
/// polls the future it drives again (`task/local.rs`).
pub(crate) const LOCAL_SET_TASKS_PER_TURN: usize = 64;

/// F1, F2: the default of [`Builder::compensation_threshold`](crate::Builder::compensation_threshold): 5 ms.
///
/// A stuck worker's victims wait up to about twice the threshold (the
/// threshold, plus up to one sampling interval until the monitor sees it),
/// so lower is better for them. Lower also costs: the monitor samples the
/// workers every threshold (or every half long-poll threshold, if that is
/// sooner), and a threshold within the host's own scheduling hiccups (a
/// few ms on a shared machine) compensates for workers that are merely
/// descheduled. At 5 ms the monitor samples every 5 ms, as the long-poll
/// detector alone has it do (half its default 10 ms threshold). 5 ms was
/// chosen from a sweep of 1–20 ms with `examples/stuck_worker.rs`;
/// docs/decisions.md#stuck-workers has the figures.
pub const DEFAULT_COMPENSATION_THRESHOLD: Duration = Duration::from_millis(5);

/// F1: the default of `Builder::long_poll_threshold`: a poll that runs
/// longer is reported (`metrics/long_poll.rs`), and the monitor samples the
/// workers every half of it.
pub(crate) const DEFAULT_LONG_POLL_THRESHOLD: Duration = Duration::from_millis(10);

/// F3: a runnable stuck stretch whose CPU clock moved by less than
/// 1/this of the wall time between two samples was kept off the CPU by
/// the OS: descheduled, not compensated (a spare would wait for a CPU too,
/// and take one from whoever has it). (`compensation/decide.rs`,
/// `StuckJudge::judge`.)
#[cfg_attr(loom, allow(dead_code))] // The monitor reads it; loom models leave the monitor out.
pub(crate) const DESCHEDULED_ON_CPU_DIVISOR: u32 = 2;

/// F3: how long `build` waits for the primaries' threads to open their stat
/// files: a thread's first steps, so only a host frozen for this long
/// makes `build` return first (the late files are then opened after it).
/// (`compensation/stat_files.rs`, `StatFiles::wait_primaries`.)
#[cfg_attr(loom, allow(dead_code))] // The stat files are left out of loom models.
pub(crate) const PRIMARIES_STAT_FILES_TIMEOUT: Duration = Duration::from_secs(10);

/// F10: the default of `Builder::thread_keep_alive`: how long a resting
/// spare, and an idle blocking-pool thread, waits for work before it
/// exits. 10 s, tokio's default.
pub(crate) const DEFAULT_THREAD_KEEP_ALIVE: Duration = Duration::from_secs(10);

/// E3: how long the cgroup must go without a throttled period before the
/// pacer's target rises again by [`TARGET_RECOVERY_PERMILLE`]: 1 s
/// (`cpu_limit/limit_reader.rs`).
#[cfg_attr(loom, allow(dead_code))] // The monitor reads it; loom models leave the monitor out.
pub(crate) const TARGET_RECOVERY_AFTER: Duration = Duration::from_secs(1);

/// E3: for how many kernel periods after build, and after each change of
/// the limit, throttled periods do not lower the pacer's target: 2. The
/// period the runtime starts in (or the limit changes in) may have spent
/// its quota before the pacer could see it (the program's start-up before
/// `build`, a quota that just shrank), and the kernel counts that throttle
/// within the next monitor tick or two; it says nothing of how the pacer
/// spends a period it controls, and lowering the target for it left 5%
/// of a 0.5-CPU quota unused for the five seconds of recovery
/// (`cpu_limit/limit_reader.rs`).
#[cfg_attr(loom, allow(dead_code))] // The monitor reads it; loom models leave the monitor out.
pub(crate) const THROTTLING_GRACE_PERIODS: u32 = 2;

/// G1: the p99 scheduling latency elastic admission keeps under: 1 ms
/// (`ElasticConfig::target`).
pub(crate) const ELASTIC_TARGET: Duration = Duration::from_millis(1);

/// G1: the lowest elastic CPU limit, and where it starts: 0.05
/// (`ElasticConfig::min_utilization`).
pub(crate) const ELASTIC_MIN_UTILIZATION: f64 = 0.05;

/// G1: the highest elastic CPU limit: 1.0, where CockroachDB uses 0.75
/// (`ElasticConfig::max_utilization`, which says why).
pub(crate) const ELASTIC_MAX_UTILIZATION: f64 = 1.0;

/// G1: where an unused limit decays to, as a share of its range: 0.10
/// (`ElasticConfig::inactive_point`).
pub(crate) const ELASTIC_INACTIVE_POINT: f64 = 0.10;

/// G1: how many steps a cut takes: 2 (`ElasticConfig::decrease_factor`).
pub(crate) const ELASTIC_DECREASE_FACTOR: f64 = 2.0;

/// G1: the share of a step an unused limit decays by: 0.25
/// (`ElasticConfig::inactive_decrease`).
pub(crate) const ELASTIC_INACTIVE_DECREASE: f64 = 0.25;

/// G1: the limit's change per second of ticks: 0.03
/// (`ElasticConfig::adjustment_per_second`, which says why).
pub(crate) const ELASTIC_ADJUSTMENT_PER_SECOND: f64 = 0.03;

/// G1: how often the controller ticks: 100 ms
/// (`ElasticConfig::sample_period`).
pub(crate) const ELASTIC_SAMPLE_PERIOD: Duration = Duration::from_millis(100);

/// G1: the window the p99 is computed over: 2.5 s (`ElasticConfig::window`).
pub(crate) const ELASTIC_WINDOW: Duration = Duration::from_millis(2500);

/// G2: the CPU an elastic task may use per admission: 10 ms
/// (`ElasticConfig::grant`).
pub(crate) const ELASTIC_GRANT: Duration = Duration::from_millis(10);

/// G2: debt older than this is forgiven (the bucket is raised to empty), so a
/// burst of debt (say, one task that ran far past its grant) cannot block
/// elastic work indefinitely. CockroachDB refills its bucket to full at this
/// interval instead, which let every elastic task run at once at each
/// refill and pushed the foreground p99 far past the target for a whole
/// window (figures in `docs/decisions.md#design-choices`: measured
/// numbers are kept there, with when and how they were taken).
pub(crate) const FORGIVE_DEBT_EVERY: Duration = Duration::from_secs(15);

#[cfg(test)]
mod tests {
    #[test]
    fn half_the_workers_search_at_most_and_always_one() {
        assert_eq!(super::max_searching(1), 1);
        assert_eq!(super::max_searching(2), 1);
        assert_eq!(super::max_searching(4), 2);
        assert_eq!(super::max_searching(5), 3);
    }
}
