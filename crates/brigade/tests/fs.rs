//! `brigade::fs` through its public API: whole-file reads and writes, a
//! `File`'s reads, writes and seeks (tokio's and futures' traits), the
//! path operations, directory listings, std's error kinds, a background
//! write's error reaching the caller, (the ends of a runtime: `fs_shutdown.rs`).
//! Every test works in a directory of its own under the system's temporary
//! directory, removed at the end. Every wait is bounded.

mod common;
mod fs_support;

use std::io::{ErrorKind, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use brigade::fs::{self, File, OpenOptions};
use common::{bounded, poll_once, with_timeout};
use fs_support::{TempDir, occupy_the_blocking_thread, one_blocking_thread, pattern};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

#[brigade::test]
async fn write_then_read_back_small_and_one_mebibyte() {
    bounded(async {
        let dir = TempDir::new("whole");
        let small = dir.join("small");
        fs::write(&small, b"hello").await.unwrap();
        assert_eq!(fs::read(&small).await.unwrap(), b"hello");
        assert_eq!(fs::read_to_string(&small).await.unwrap(), "hello");

        let big = dir.join("big");
        let contents = pattern(1 << 20);
        fs::write(&big, &contents).await.unwrap();
        assert_eq!(fs::read(&big).await.unwrap(), contents);
        assert_eq!(fs::metadata(&big).await.unwrap().len(), 1 << 20);

        // `write` truncates what was there.
        fs::write(&big, "short").await.unwrap();
        assert_eq!(fs::read(&big).await.unwrap(), b"short");

        fs::write(&small, [0xff, 0xfe]).await.unwrap();
        let not_utf8 = fs::read_to_string(&small).await.unwrap_err();
        assert_eq!(not_utf8.kind(), ErrorKind::InvalidData);
    })
    .await;
}

#[brigade::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_write_flush_seek_and_read_back_in_pieces() {
    bounded(async {
        let dir = TempDir::new("file");
        let path = dir.join("data");
        let mut file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .await
            .unwrap();
        // Small pieces: the 1 MiB goes to the pool in 16 writes, and comes
        // back in 16 reads.
        file.set_max_buf_size(64 * 1024);
        assert_eq!(file.max_buf_size(), 64 * 1024);
        let contents = pattern(1 << 20);
        file.write_all(&contents).await.unwrap();
        file.flush().await.unwrap();
        assert_eq!(file.stream_position().await.unwrap(), 1 << 20);

        assert_eq!(file.seek(SeekFrom::Start(0)).await.unwrap(), 0);
        let mut back = Vec::new();
        assert_eq!(file.read_to_end(&mut back).await.unwrap(), 1 << 20);
        assert_eq!(back, contents);
        // At the end, reads return 0.
        assert_eq!(file.read(&mut [0u8; 8]).await.unwrap(), 0);

        assert_eq!(file.seek(SeekFrom::End(-3)).await.unwrap(), (1 << 20) - 3);
        let mut tail = [0u8; 3];
        file.read_exact(&mut tail).await.unwrap();
        assert_eq!(tail, contents[contents.len() - 3..]);
        assert_eq!(file.metadata().await.unwrap().len(), 1 << 20);
    })
    .await;
}

/// A read that asked for more than its successor takes leaves bytes in
/// the buffer, the file's cursor past them: a write or seek after it
/// counts from where the reader stopped.
#[test]
fn write_after_a_partial_read_lands_where_the_reader_stopped() {
    with_timeout(common::TIMEOUT_SECS, || {
        let dir = TempDir::new("unread");
        let path = dir.join("digits");
        std::fs::write(&path, "0123456789").unwrap();
        one_blocking_thread().block_on(bounded(async {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .await
                .unwrap();
            // A 10-byte read starts, and is given up before it completes.
            let release = occupy_the_blocking_thread().await;
            let mut wide = [0u8; 10];
            {
                let mut read = std::pin::pin!(file.read(&mut wide));
                assert!(poll_once(&mut read).is_pending());
            }
            drop(release);
            // The next read takes 3 of the 10 bytes it read.
            let mut three = [0u8; 3];
            file.read_exact(&mut three).await.unwrap();
            assert_eq!(&three, b"012");
            assert_eq!(file.stream_position().await.unwrap(), 3);
            file.write_all(b"ab").await.unwrap();
            file.flush().await.unwrap();
            assert_eq!(fs::read(&path).await.unwrap(), b"012ab56789");
        }));
    });
}

#[brigade::test]
async fn append_mode_writes_at_the_end() {
    bounded(async {
        let dir = TempDir::new("append");
        let path = dir.join("log");
        fs::write(&path, "one\n").await.unwrap();
        let mut log = OpenOptions::new().append(true).open(&path).await.unwrap();
        log.write_all(b"two\n").await.unwrap();
        log.write_all(b"three\n").await.unwrap();
        log.shutdown().await.unwrap();
        assert_eq!(
            fs::read_to_string(&path).await.unwrap(),
            "one\ntwo\nthree\n"
        );
    })
    .await;
}

#[brigade::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_len_truncates_and_extends_with_zeroes() {
    bounded(async {
        let dir = TempDir::new("set-len");
        let path = dir.join("sized");
        let mut file = File::create(&path).await.unwrap();
        file.write_all(b"0123456789").await.unwrap();
        // `set_len` flushes first: the write is in before the truncation.
        file.set_len(4).await.unwrap();
        assert_eq!(fs::read(&path).await.unwrap(), b"0123");
        file.set_len(8).await.unwrap();
        assert_eq!(fs::read(&path).await.unwrap(), b"0123\0\0\0\0");

        // `&self` methods from two tasks at once on one file.
        let file = Arc::new(file);
        let tasks: Vec<_> = (0..2u64)
            .map(|n| {
                let file = file.clone();
                brigade::spawn(async move {
                    for round in 0..20 {
                        file.set_len(n * 100 + round).await.unwrap();
                        file.sync_all().await.unwrap();
                        file.sync_data().await.unwrap();
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        let len = fs::metadata(&path).await.unwrap().len();
        assert!(
            len == 19 || len == 119,
            "the last set_len of either task, not {len}"
        );
    })
    .await;
}

#[brigade::test]
async fn read_dir_lists_every_entry_over_several_chunks() {
    bounded(async {
        let dir = TempDir::new("list");
        // More than one chunk of 32.
        let mut expected: Vec<String> = (0..70).map(|n| format!("file-{n:02}")).collect();
        for (n, name) in expected.iter().enumerate() {
            fs::write(dir.join(name), vec![b'x'; n]).await.unwrap();
        }
        fs::create_dir(dir.join("sub")).await.unwrap();
        expected.push("sub".to_owned());

        let mut listed = Vec::new();
        let mut entries = fs::read_dir(&dir.0).await.unwrap();
        while let Some(entry) = entries.next_entry().await.unwrap() {
            let name = entry.file_name().into_string().unwrap();
            assert_eq!(entry.path(), dir.join(&name));
            assert_ne!(entry.ino(), 0);
            let file_type = entry.file_type().await.unwrap();
            let metadata = entry.metadata().await.unwrap();
            if name == "sub" {
                assert!(file_type.is_dir() && metadata.is_dir());
            } else {
                let n: u64 = name["file-".len()..].parse().unwrap();
                assert!(file_type.is_file());
                assert_eq!(metadata.len(), n);
            }
            listed.push(name);
        }
        // Once ended, it stays ended.
        assert!(entries.next_entry().await.unwrap().is_none());
        listed.sort();
        expected.sort();
        assert_eq!(listed, expected);

        let missing = fs::read_dir(dir.join("missing")).await.unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        let not_a_dir = fs::read_dir(dir.join("file-00")).await.unwrap_err();
        assert_eq!(not_a_dir.kind(), ErrorKind::NotADirectory);
    })
    .await;
}

#[brigade::test]
async fn directories_are_created_and_removed() {
    bounded(async {
        let dir = TempDir::new("dirs");
        let deep = dir.join("a/b/c");
        fs::create_dir_all(&deep).await.unwrap();
        fs::create_dir_all(&deep).await.unwrap(); // exists: no error
        assert!(fs::metadata(&deep).await.unwrap().is_dir());
        let again = fs::create_dir(&deep).await.unwrap_err();
        assert_eq!(again.kind(), ErrorKind::AlreadyExists);
        let orphan = fs::create_dir(dir.join("x/y")).await.unwrap_err();
        assert_eq!(orphan.kind(), ErrorKind::NotFound);

        fs::write(deep.join("f"), "f").await.unwrap();
        let not_empty = fs::remove_dir(dir.join("a")).await.unwrap_err();
        assert_eq!(not_empty.kind(), ErrorKind::DirectoryNotEmpty);
        fs::remove_dir_all(dir.join("a")).await.unwrap();
        assert!(!fs::try_exists(dir.join("a")).await.unwrap());

        let mut builder = fs::DirBuilder::new();
        builder.recursive(true).mode(0o750);
        builder.create(dir.join("m/n")).await.unwrap();
        builder.create(dir.join("m/n")).await.unwrap();
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &fs::metadata(dir.join("m/n")).await.unwrap().permissions(),
        );
        // The umask may take bits away, never add any.
        assert_eq!(mode & 0o777 & !0o750, 0);
        fs::remove_dir(dir.join("m/n")).await.unwrap();
        fs::remove_dir(dir.join("m")).await.unwrap();
        assert!(!fs::try_exists(dir.join("m")).await.unwrap());
    })
    .await;
}

#[brigade::test]
async fn rename_copy_links_and_canonicalize() {
    bounded(async {
        let dir = TempDir::new("paths");
        let original = dir.join("original");
        fs::write(&original, "contents").await.unwrap();

        let copied = dir.join("copied");
        assert_eq!(fs::copy(&original, &copied).await.unwrap(), 8);
        assert_eq!(fs::read(&copied).await.unwrap(), b"contents");

        let renamed = dir.join("renamed");
        fs::rename(&copied, &renamed).await.unwrap();
        assert!(!fs::try_exists(&copied).await.unwrap());
        assert_eq!(fs::read(&renamed).await.unwrap(), b"contents");

        let hard = dir.join("hard");
        fs::hard_link(&original, &hard).await.unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!(fs::metadata(&original).await.unwrap().nlink(), 2);
        assert_eq!(
            fs::metadata(&hard).await.unwrap().ino(),
            fs::metadata(&original).await.unwrap().ino()
        );

        let soft = dir.join("soft");
        fs::symlink("original", &soft).await.unwrap();
        assert_eq!(fs::read_link(&soft).await.unwrap(), Path::new("original"));
        assert!(fs::symlink_metadata(&soft).await.unwrap().is_symlink());
        assert!(fs::metadata(&soft).await.unwrap().is_file());
        let canonical = fs::canonicalize(&soft).await.unwrap();
        assert_eq!(canonical, std::fs::canonicalize(&original).unwrap());
        assert_eq!(fs::read_to_string(&soft).await.unwrap(), "contents");

        fs::remove_file(&original).await.unwrap();
        // A broken link does not count as existing.
        assert!(!fs::try_exists(&soft).await.unwrap());
        assert_eq!(fs::read(&hard).await.unwrap(), b"contents");

        let mut permissions = fs::metadata(&hard).await.unwrap().permissions();
        permissions.set_readonly(true);
        fs::set_permissions(&hard, permissions).await.unwrap();
        assert!(fs::metadata(&hard).await.unwrap().permissions().readonly());
    })
    .await;
}

#[brigade::test]
async fn errors_are_std_kinds() {
    bounded(async {
        let dir = TempDir::new("errors");
        let missing = dir.join("missing");
        assert_eq!(
            fs::read(&missing).await.unwrap_err().kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            File::open(&missing).await.unwrap_err().kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            fs::metadata(&missing).await.unwrap_err().kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            fs::remove_file(&missing).await.unwrap_err().kind(),
            ErrorKind::NotFound
        );

        let present = dir.join("present");
        File::create_new(&present).await.unwrap();
        let again = File::create_new(&present).await.unwrap_err();
        assert_eq!(again.kind(), ErrorKind::AlreadyExists);

        // A directory opened for writing.
        let directory = OpenOptions::new()
            .write(true)
            .open(&dir.0)
            .await
            .unwrap_err();
        assert_eq!(directory.kind(), ErrorKind::IsADirectory);
        // `link(2)` refuses directories with EPERM, even to root.
        let linked = fs::hard_link(&dir.0, dir.join("dir-link"))
            .await
            .unwrap_err();
        assert_eq!(linked.kind(), ErrorKind::PermissionDenied);
        // No access mode at all.
        let no_mode = OpenOptions::new().open(&present).await.unwrap_err();
        assert_eq!(no_mode.kind(), ErrorKind::InvalidInput);
    })
    .await;
}

/// A write returns at once; its error comes with the next flush, write,
/// shutdown or `sync_all`, once, and is kept through reads and seeks.
#[brigade::test]
async fn a_background_write_error_surfaces_later() {
    bounded(async {
        let dir = TempDir::new("write-error");
        let path = dir.join("read-only");
        fs::write(&path, "unchanged").await.unwrap();
        let mut file = File::open(&path).await.unwrap();

        assert_eq!(file.write(b"nope").await.unwrap(), 4);
        assert!(file.flush().await.is_err());
        file.flush().await.unwrap(); // reported once

        assert_eq!(file.write(b"nope").await.unwrap(), 4);
        assert!(file.write(b"again").await.is_err());

        file.write_all(b"nope").await.unwrap();
        // A read settles the write, keeps its error, and still reads.
        let mut start = [0u8; 3];
        file.read_exact(&mut start).await.unwrap();
        assert_eq!(&start, b"unc");
        assert!(file.shutdown().await.is_err());

        file.write_all(b"nope").await.unwrap();
        file.seek(SeekFrom::Start(0)).await.unwrap();
        assert!(file.sync_all().await.is_err());
        file.write_all(b"nope").await.unwrap();
        assert!(file.set_len(0).await.is_err());

        assert_eq!(fs::read(&path).await.unwrap(), b"unchanged");
    })
    .await;
}

#[brigade::test]
async fn std_conversions_wait_for_the_operation_in_flight() {
    bounded(async {
        let dir = TempDir::new("std");
        let path = dir.join("converted");
        let mut file = File::create(&path).await.unwrap();
        file.write_all(b"written").await.unwrap();
        // The write is in flight.
        let file = file.try_into_std().unwrap_err();
        let mut std_file = file.into_std().await;
        assert_eq!(std::fs::read(&path).unwrap(), b"written");
        use std::io::Seek;
        assert_eq!(std_file.stream_position().unwrap(), 7);

        let mut file = File::from_std(std_file);
        file.flush().await.unwrap();
        let clone = file.try_clone().await.unwrap();
        // Clones share the cursor.
        file.seek(SeekFrom::Start(2)).await.unwrap();
        let mut clone_std = clone.try_into_std().unwrap();
        assert_eq!(clone_std.stream_position().unwrap(), 2);
    })
    .await;
}

#[brigade::test]
async fn futures_io_traits_read_write_and_seek() {
    bounded(async {
        let dir = TempDir::new("futures");
        let mut file = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(dir.join("f"))
            .await
            .unwrap();
        futures_lite::AsyncWriteExt::write_all(&mut file, b"futures io")
            .await
            .unwrap();
        futures_lite::AsyncWriteExt::flush(&mut file).await.unwrap();
        assert_eq!(
            futures_lite::AsyncSeekExt::seek(&mut file, SeekFrom::Start(8))
                .await
                .unwrap(),
            8
        );
        let mut end = String::new();
        futures_lite::AsyncReadExt::read_to_string(&mut file, &mut end)
            .await
            .unwrap();
        assert_eq!(end, "io");
        futures_lite::AsyncWriteExt::close(&mut file).await.unwrap();
    })
    .await;
}
