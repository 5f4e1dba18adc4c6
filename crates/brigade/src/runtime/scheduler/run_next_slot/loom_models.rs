//! Model-checks the run-next slot's fill, open and take protocol with

//! `loom`: run with `RUSTFLAGS="--cfg loom" cargo test -p brigade --lib --release`.

use std::ptr::NonNull;

use super::{RunNext, Slotted};
use crate::sync::thread;
use loom::sync::Arc;

/// A boxed number stands in for a task.
struct Item(Box<u32>);

impl Slotted for Item {
    fn into_raw(self) -> NonNull<()> {
        NonNull::from(Box::leak(self.0)).cast()
    }

    unsafe fn from_raw(ptr: NonNull<()>) -> Self {
        // SAFETY: `ptr` came from `Box::leak` in `into_raw`, once.
        Item(unsafe { Box::from_raw(ptr.cast::<u32>().as_ptr()) })
    }
}

/// The owner fills the slot, replaces the item and takes; another
/// thread opens the slot and steals. Each item is taken exactly once,
/// by the owner's replace or take or by the stealer, and never twice
/// (a double take would free a box twice, which loom reports); an item
/// left behind is dropped with the slot.
#[test]
fn each_item_is_taken_once_by_the_owner_or_a_stealer() {
    loom::model(|| {
        let slot = Arc::new(RunNext::<Item>::new());
        slot.put_into_empty(Item(Box::new(1)));
        let stealer = {
            let slot = slot.clone();
            thread::spawn(move || {
                slot.open();
                slot.steal().map(|item| *item.0)
            })
        };
        let mut taken: Vec<u32> = slot
            .replace(Item(Box::new(2)))
            .map(|item| *item.0)
            .into_iter()
            .collect();
        taken.extend(slot.take().map(|item| *item.0));
        taken.extend(stealer.join().unwrap());
        taken.sort_unstable();
        assert_eq!(taken, [1, 2]);
    });
}
