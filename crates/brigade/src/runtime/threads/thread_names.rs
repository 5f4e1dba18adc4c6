//! The names of the runtime's threads, in one place.
//!
//! By default each thread's name says its role, short enough for what
//! Linux keeps of a name (15 bytes: `/proc/*/task/*/comm`, `top -H`,
//! `perf`), so that every role reads differently there:
//!
//! | thread | name |
//! |---|---|
//! | worker `N` | `brigade-w-N` |
//! | spare worker `N` (compensation, `block_in_place`) | `brigade-s-N` |
//! | blocking-pool thread | `brigade-blk-N` |
//! | the monitor | `brigade-mon` |
//! | the fallback driver thread | `brigade-drv` |
//! | a `tokio-compat` thread | `brigade-tok-N` |
//!
//! A blocking-pool thread takes the lowest number no live pool thread
//! holds ([`ThreadNumber`]), so the numbers stay below the pool's bound
//! however often idle threads exit and new ones start. The `tokio-compat`
//! threads are started by tokio, which says nothing when one of its
//! blocking threads exits: they count up.
//!
//! `Builder::thread_name` and `Builder::thread_name_fn` keep tokio's
//! meaning: set, the name (or the function's result, called once per
//! thread as it starts) names every thread the runtime starts, whatever
//! its role, and the later of the two calls wins.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::sync::{Mutex, lock};

/// A user's naming function (`Builder::thread_name_fn`).
pub(crate) type NameFn = Arc<dyn Fn() -> String + Send + Sync + 'static>;

/// The builder's choice: the role names, or a user's function.
#[derive(Clone, Default)]
pub(crate) struct ThreadNaming(Option<NameFn>);

impl ThreadNaming {
    /// Every thread named `name` (`Builder::thread_name`).
    pub(crate) fn fixed(name: String) -> Self {
        ThreadNaming(Some(Arc::new(move || name.clone())))
    }

    /// Every thread named by `f` (`Builder::thread_name_fn`).
    pub(crate) fn from_fn(f: NameFn) -> Self {
        ThreadNaming(Some(f))
    }
}

impl fmt::Debug for ThreadNaming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            None => f.write_str("ThreadNaming::Roles"),
            Some(_) => f.write_str("ThreadNaming::Custom"),
        }
    }
}

/// A runtime's thread names, shared by everything that starts a thread.
pub(crate) struct ThreadNames {
    custom: Option<NameFn>,
    /// The blocking pool's numbers; see [`ThreadNumber`].
    blocking: Mutex<Numbers>,
    /// The next `tokio-compat` thread's number.
    tokio: AtomicUsize,
}

/// The numbers handed out: every number below `next` is held, but those
/// in `free` (a min-heap: the lowest is taken first).
#[derive(Default)]
struct Numbers {
    next: usize,
    free: BinaryHeap<Reverse<usize>>,
}

impl ThreadNames {
    pub(crate) fn new(naming: &ThreadNaming) -> Arc<Self> {
        Arc::new(ThreadNames {
            custom: naming.0.clone(),
            blocking: Mutex::new(Numbers::default()),
            tokio: AtomicUsize::new(0),
        })
    }

    /// The user's name, or the role's.
    fn name(&self, role: impl FnOnce() -> String) -> String {
        match &self.custom {
            Some(custom) => custom(),
            None => role(),
        }
    }

    /// Worker `index`'s name.
    pub(crate) fn worker(&self, index: usize) -> String {
        self.name(|| format!("brigade-w-{index}"))
    }

    /// The name of spare `index` (counted from the first spare slot).
    pub(crate) fn spare(&self, index: usize) -> String {
        self.name(|| format!("brigade-s-{index}"))
    }

    /// A new blocking-pool thread's name, and its number, which the thread
    /// holds until it exits.
    pub(crate) fn blocking(self: &Arc<Self>) -> (String, ThreadNumber) {
        let number = {
            let mut numbers = lock(&self.blocking);
            match numbers.free.pop() {
                Some(Reverse(number)) => number,
                None => {
                    numbers.next += 1;
                    numbers.next - 1
                }
            }
        };
        let name = self.name(|| format!("brigade-blk-{number}"));
        let held = ThreadNumber {
            names: self.clone(),
            number,
        };
        (name, held)
    }

    /// The monitor thread's name.
    pub(crate) fn monitor(&self) -> String {
        self.name(|| "brigade-mon".to_owned())
    }

    /// The fallback driver thread's name.
    pub(crate) fn driver(&self) -> String {
        self.name(|| "brigade-drv".to_owned())
    }

    /// The next `tokio-compat` thread's name (tokio's workers, then its
    /// blocking threads).
    #[cfg_attr(not(feature = "tokio-compat"), allow(dead_code))]
    pub(crate) fn tokio_compat(&self) -> String {
        self.name(|| {
            let number = self.tokio.fetch_add(1, Ordering::Relaxed);
            format!("brigade-tok-{number}")
        })
    }
}

impl fmt::Debug for ThreadNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadNames")
            .field("custom", &self.custom.is_some())
            .finish_non_exhaustive()
    }
}

/// A blocking-pool thread's number, given back when the thread exits (the
/// value is dropped), for the next thread to take.
pub(crate) struct ThreadNumber {
    names: Arc<ThreadNames>,
    number: usize,
}

impl Drop for ThreadNumber {
    fn drop(&mut self) {
        lock(&self.names.blocking).free.push(Reverse(self.number));
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{ThreadNames, ThreadNaming};

    #[test]
    fn role_names_fit_what_linux_keeps_and_differ() {
        let names = ThreadNames::new(&ThreadNaming::default());
        let (blocking, _number) = names.blocking();
        let all = [
            names.worker(999),
            names.spare(999),
            blocking,
            names.monitor(),
            names.driver(),
            names.tokio_compat(),
        ];
        for name in &all {
            assert!(name.len() <= 15, "{name}");
        }
        let prefixes: std::collections::HashSet<_> = all
            .iter()
            .map(|name| name.trim_end_matches(|c: char| c.is_ascii_digit()))
            .collect();
        assert_eq!(prefixes.len(), all.len());
    }

    #[test]
    fn blocking_numbers_are_reused_lowest_first() {
        let names = ThreadNames::new(&ThreadNaming::default());
        let (first, zero) = names.blocking();
        let (_, one) = names.blocking();
        let (_, two) = names.blocking();
        assert_eq!(first, "brigade-blk-0");
        drop(two);
        drop(zero);
        assert_eq!(names.blocking().0, "brigade-blk-0");
        drop(one);
    }

    #[test]
    fn a_custom_name_names_every_role() {
        let names = ThreadNames::new(&ThreadNaming::fixed("svc".to_owned()));
        assert_eq!(names.worker(0), "svc");
        assert_eq!(names.blocking().0, "svc");
        assert_eq!(names.monitor(), "svc");
        assert_eq!(names.tokio_compat(), "svc");
    }
}
