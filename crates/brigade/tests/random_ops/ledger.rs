//! Drop accounting: every future, closure and output is wrapped in a
//! `Token` counted in a per-seed `Ledger`, which catches a lost or second drop.

#[allow(unused_imports)]
use super::*;

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    /// A spawned future.
    Future,
    /// A `spawn_blocking` closure.
    Closure,
    /// A task's output.
    Output,
}

pub(crate) struct Entry {
    pub(crate) kind: Kind,
    pub(crate) what: &'static str,
    pub(crate) op: usize,
    pub(crate) drops: u32,
}

/// Every [`Token`] of one seed: what it guards and how often it was dropped.
#[derive(Default)]
pub(crate) struct Ledger {
    pub(crate) entries: Mutex<Vec<Entry>>,
}

/// Counted once when created and once when dropped; put one in everything
/// whose drop is to be checked.
pub(crate) struct Token {
    pub(crate) ledger: Arc<Ledger>,
    pub(crate) id: usize,
}

impl Ledger {
    pub(crate) fn token(self: &Arc<Self>, kind: Kind, what: &'static str, op: usize) -> Token {
        let mut entries = lock(&self.entries);
        entries.push(Entry {
            kind,
            what,
            op,
            drops: 0,
        });
        Token {
            ledger: self.clone(),
            id: entries.len() - 1,
        }
    }

    pub(crate) fn created(&self) -> usize {
        lock(&self.entries).len()
    }

    pub(crate) fn dropped(&self) -> usize {
        lock(&self.entries)
            .iter()
            .filter(|entry| entry.drops > 0)
            .count()
    }

    /// Names of the tokens of these kinds not dropped yet.
    pub(crate) fn live(&self, kinds: &[Kind]) -> Vec<String> {
        lock(&self.entries)
            .iter()
            .filter(|entry| entry.drops == 0 && kinds.contains(&entry.kind))
            .map(|entry| format!("{:?} of {}#{}", entry.kind, entry.what, entry.op))
            .collect()
    }

    pub(crate) fn dropped_twice(&self) -> Vec<String> {
        lock(&self.entries)
            .iter()
            .filter(|entry| entry.drops > 1)
            .map(|entry| {
                format!(
                    "{:?} of {}#{} dropped {} times",
                    entry.kind, entry.what, entry.op, entry.drops
                )
            })
            .collect()
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        // Never panics here: a second drop is recorded and reported later.
        if let Some(entry) = lock(&self.ledger.entries).get_mut(self.id) {
            entry.drops += 1;
        }
    }
}

/// A future with a [`Token`]: its drop is counted.
pub(crate) struct Tracked<F> {
    pub(crate) _token: Token,
    pub(crate) future: Pin<Box<F>>,
}

impl<F: Future> Future for Tracked<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.future.as_mut().poll(cx)
    }
}

pub(crate) fn tracked<F: Future>(
    ledger: &Arc<Ledger>,
    what: &'static str,
    op: usize,
    future: F,
) -> Tracked<F> {
    Tracked {
        _token: ledger.token(Kind::Future, what, op),
        future: Box::pin(future),
    }
}

/// What every task of the sequence returns: a value with a token, so
/// outputs are counted too.
pub(crate) struct Out {
    pub(crate) value: u64,
    pub(crate) _token: Token,
}

impl std::fmt::Debug for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Out({})", self.value)
    }
}

/// A tracked future whose value comes back as a tracked [`Out`].
pub(crate) fn tracked_task<F>(
    ledger: &Arc<Ledger>,
    what: &'static str,
    op: usize,
    future: F,
) -> Tracked<impl Future<Output = Out> + Send + 'static + use<F>>
where
    F: Future<Output = u64> + Send + 'static,
{
    let outputs = ledger.clone();
    tracked(ledger, what, op, async move {
        let value = future.await;
        Out {
            value,
            _token: outputs.token(Kind::Output, what, op),
        }
    })
}

/// A tracked `spawn_blocking` closure: its token is dropped with the
/// closure, run or not.
pub(crate) fn tracked_closure<F>(
    ledger: &Arc<Ledger>,
    what: &'static str,
    op: usize,
    f: F,
) -> impl FnOnce() -> Out + Send + 'static + use<F>
where
    F: FnOnce() -> u64 + Send + 'static,
{
    let token = ledger.token(Kind::Closure, what, op);
    let outputs = ledger.clone();
    move || {
        let _token = token;
        let value = f();
        Out {
            value,
            _token: outputs.token(Kind::Output, what, op),
        }
    }
}

/// A future whose `Drop` panics (unless already unwinding).
pub(crate) struct PanicsOnDrop<F> {
    pub(crate) future: Pin<Box<F>>,
}

impl<F: Future> Future for PanicsOnDrop<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.future.as_mut().poll(cx)
    }
}

impl<F> Drop for PanicsOnDrop<F> {
    fn drop(&mut self) {
        if !thread::panicking() {
            panic!("{INTENTIONAL} in a future's Drop");
        }
    }
}
