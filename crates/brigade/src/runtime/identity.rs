//! Which runtime a [`Handle`] is of: its flavour ([`RuntimeFlavor`]) and
//! its process-unique [`Id`], as tokio's `Handle::runtime_flavor` and
//! `Handle::id`.

use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::runtime::handle::Handle;

/// The kind of runtime a [`Handle`] is of, as tokio's
/// `tokio::runtime::RuntimeFlavor`.
///
/// # Examples
///
/// ```
/// use brigade::runtime::{Builder, RuntimeFlavor};
///
/// let rt = Builder::new_current_thread().build()?;
/// assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
/// let rt = Builder::new_multi_thread().worker_threads(1).build()?;
/// assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::MultiThread);
/// # Ok::<(), brigade::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RuntimeFlavor {
    /// Tasks run on the thread in `block_on`
    /// ([`Builder::new_current_thread`](crate::runtime::Builder::new_current_thread)).
    CurrentThread,
    /// Tasks run on a pool of worker threads
    /// ([`Builder::new_multi_thread`](crate::runtime::Builder::new_multi_thread)).
    MultiThread,
}

/// An opaque identifier of a runtime, unique among the runtimes this
/// process has built, as tokio's `tokio::runtime::Id`: equal for handles
/// of the same runtime, different for any two runtimes, never reused. Its
/// `Display` is a number, for logs and metrics labels; nothing else about
/// its value is promised.
///
/// # Examples
///
/// ```
/// let first = brigade::Runtime::new()?;
/// let second = brigade::Runtime::new()?;
/// assert_eq!(first.handle().id(), first.handle().clone().id());
/// assert_ne!(first.handle().id(), second.handle().id());
/// println!("runtime {}", first.handle().id());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

impl Id {
    /// The next id: a process-wide count from 1. (A `u64` cannot run out:
    /// a runtime a nanosecond would take 584 years.)
    pub(crate) fn next() -> Id {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        Id(NonZeroU64::new(id).expect("runtime ids start at 1 and do not wrap"))
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Handle {
    /// The kind of runtime this handle is of.
    pub fn runtime_flavor(&self) -> RuntimeFlavor {
        if self.shared.current_thread.is_some() {
            RuntimeFlavor::CurrentThread
        } else {
            RuntimeFlavor::MultiThread
        }
    }

    /// The runtime's identifier: the same for every handle of one runtime,
    /// different from every other runtime's in this process.
    pub fn id(&self) -> Id {
        self.shared.id
    }
}
