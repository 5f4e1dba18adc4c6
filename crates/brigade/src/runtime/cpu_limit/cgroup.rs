//! Where the kernel keeps this process's CPU limit, and how to read it.
//!
//! A container's CPU limit is a CFS bandwidth quota of the cgroup the
//! process is in, or of one of its ancestors (the tightest wins):
//! - cgroup v2: `cpu.max` holds `QUOTA PERIOD` in microseconds, `max` for
//!   no limit; `cpu.stat` counts `nr_throttled` and `throttled_usec`.
//! - cgroup v1, `cpu` controller: `cpu.cfs_quota_us` (`-1` for no limit)
//!   and `cpu.cfs_period_us`; `cpu.stat` counts `nr_throttled` and
//!   `throttled_time` (nanoseconds).
//!
//! The process's cgroup is in `/proc/self/cgroup` (`0::/path` on v2;
//! `N:cpu,cpuacct:/path` on v1) and the hierarchy's mount point in
//! `/proc/self/mountinfo`, whose fourth field is the path of the
//! hierarchy that the mount shows. Inside a container with a cgroup
//! namespace both read `/`, and the container's own limit is in the
//! files at the mount point. Each level from the process's cgroup up to
//! the mount point is looked at.
//!
//! [`CgroupFiles::open`] opens every file once, at `Builder::build`, and
//! [`CgroupFiles::read_limit`] and [`CgroupFiles::read_throttling`] read
//! them again from their start (the kernel
//! writes their text anew for each read), so the runtime opens no file
//! while it runs. Parsing is separate from the files ([`parse_cpu_max`],
//! [`parse_cfs`], [`parse_stat`], [`locate`]) and tested on text.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A CFS quota: so many CPUs, over periods of so long.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Quota {
    pub(crate) cpus: f64,
    pub(crate) period: Duration,
}

/// Which cgroup version a hierarchy is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V1,
    V2,
}

/// One level's limit files.
#[derive(Debug)]
enum LevelFiles {
    /// `cpu.max`.
    V2 { max: File },
    /// `cpu.cfs_quota_us` and `cpu.cfs_period_us`.
    V1 { quota: File, period: File },
}

#[derive(Debug)]
struct Level {
    dir: PathBuf,
    files: LevelFiles,
}

/// The open limit files of every level of this process's cgroup, and the
/// leaf's `cpu.stat`.
#[derive(Debug)]
pub(crate) struct CgroupFiles {
    version: Version,
    levels: Vec<Level>,
    stat: Option<File>,
}

/// A file that could not be parsed: no limit is read from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unparsable(pub(crate) PathBuf);

impl CgroupFiles {
    /// Opens the CPU limit files of the cgroup the calling thread is in, as
    /// `proc_self` (normally `/proc/thread-self`, which is `/proc/self` for
    /// a process whose threads share one cgroup) describes it; `Ok(None)` where
    /// there is no cgroup `cpu` hierarchy, or no level has a limit file
    /// (a host's root cgroup).
    pub(crate) fn open(proc_self: &Path) -> io::Result<Option<CgroupFiles>> {
        let cgroup = std::fs::read_to_string(proc_self.join("cgroup"))?;
        let mountinfo = std::fs::read_to_string(proc_self.join("mountinfo"))?;
        let Some((version, leaf, mount_point)) = locate(&cgroup, &mountinfo) else {
            return Ok(None);
        };
        let levels: Vec<Level> = leaf
            .ancestors()
            .take_while(|dir| dir.starts_with(&mount_point))
            .filter_map(|dir| Level::open(version, dir))
            .collect();
        let stat = File::open(leaf.join("cpu.stat")).ok();
        if levels.is_empty() && stat.is_none() {
            return Ok(None);
        }
        Ok(Some(CgroupFiles {
            version,
            levels,
            stat,
        }))
    }

    /// The cgroup version these files belong to.
    #[cfg(test)]
    pub(crate) fn version(&self) -> Version {
        self.version
    }

    /// Reads the limit now: the tightest level's, with its period. A level
    /// whose text cannot be parsed counts as no limit and is returned, for
    /// the caller to warn about.
    pub(crate) fn read_limit(&self) -> (Option<Quota>, Vec<Unparsable>) {
        let mut tightest: Option<Quota> = None;
        let mut unparsable = Vec::new();
        for level in &self.levels {
            let mut buf = [0u8; 64];
            let limit = match &level.files {
                LevelFiles::V2 { max } => read_text(max, &mut buf).and_then(parse_cpu_max),
                LevelFiles::V1 { quota, period } => {
                    let mut period_buf = [0u8; 64];
                    match (
                        read_text(quota, &mut buf),
                        read_text(period, &mut period_buf),
                    ) {
                        (Some(quota), Some(period)) => parse_cfs(quota, period),
                        _ => None,
                    }
                }
            };
            match limit {
                Some(Some(quota)) if tightest.is_none_or(|tight| quota.cpus < tight.cpus) => {
                    tightest = Some(quota);
                }
                Some(_) => {}
                None => unparsable.push(Unparsable(level.dir.clone())),
            }
        }
        (tightest, unparsable)
    }

    /// The leaf cgroup's throttled periods and throttled time in
    /// nanoseconds so far; zeros where it has no `cpu.stat`.
    pub(crate) fn read_throttling(&self) -> (u64, u64) {
        let mut buf = [0u8; 1024];
        self.stat
            .as_ref()
            .and_then(|file| read_text(file, &mut buf))
            .map_or((0, 0), |stat| parse_stat(stat, self.version))
    }
}

impl Level {
    fn open(version: Version, dir: &Path) -> Option<Level> {
        let files = match version {
            Version::V2 => LevelFiles::V2 {
                max: File::open(dir.join("cpu.max")).ok()?,
            },
            Version::V1 => LevelFiles::V1 {
                quota: File::open(dir.join("cpu.cfs_quota_us")).ok()?,
                period: File::open(dir.join("cpu.cfs_period_us")).ok()?,
            },
        };
        Some(Level {
            dir: dir.to_owned(),
            files,
        })
    }
}

/// The file's text from its start, if it can be read and is UTF-8.
fn read_text<'b>(file: &File, buf: &'b mut [u8]) -> Option<&'b str> {
    use std::os::unix::fs::FileExt;
    let mut len = 0;
    while len < buf.len() {
        match file.read_at(&mut buf[len..], len as u64) {
            Ok(0) => break,
            Ok(read) => len += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    std::str::from_utf8(&buf[..len]).ok()
}

/// cgroup v2 `cpu.max`: `Some(None)` for `max` (no limit), `Some(Some(quota))`
/// for a quota, `None` for text that is neither.
pub(crate) fn parse_cpu_max(text: &str) -> Option<Option<Quota>> {
    let mut fields = text.split_whitespace();
    let quota = fields.next()?;
    let period: u64 = match fields.next() {
        Some(period) => period.parse().ok()?,
        None => 100_000,
    };
    if fields.next().is_some() || period == 0 {
        return None;
    }
    if quota == "max" {
        return Some(None);
    }
    let quota: u64 = quota.parse().ok()?;
    (quota > 0).then(|| Some(quota_of(quota, period)))
}

/// cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`, as
/// [`parse_cpu_max`]: a quota of `-1` is no limit.
pub(crate) fn parse_cfs(quota: &str, period: &str) -> Option<Option<Quota>> {
    let quota: i64 = quota.trim().parse().ok()?;
    let period: u64 = period.trim().parse().ok()?;
    if period == 0 {
        return None;
    }
    match quota {
        -1 => Some(None),
        quota if quota > 0 => Some(Some(quota_of(quota as u64, period))),
        _ => None,
    }
}

/// The quota of `quota` µs per `period` µs.
fn quota_of(quota: u64, period: u64) -> Quota {
    Quota {
        cpus: quota as f64 / period as f64,
        period: Duration::from_micros(period),
    }
}

/// `cpu.stat`'s throttled periods and throttled time in nanoseconds
/// (`throttled_usec` on v2, `throttled_time` on v1); 0 where absent.
pub(crate) fn parse_stat(text: &str, version: Version) -> (u64, u64) {
    let mut throttled = 0;
    let mut nanos = 0;
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let (Some(key), Some(value)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Ok(value) = value.parse::<u64>() else {
            continue;
        };
        match (key, version) {
            ("nr_throttled", _) => throttled = value,
            ("throttled_usec", Version::V2) => nanos = value.saturating_mul(1_000),
            ("throttled_time", Version::V1) => nanos = value,
            _ => {}
        }
    }
    (throttled, nanos)
}

/// Finds the process's cgroup directory for the CPU limit and the mount
/// point of its hierarchy, from `/proc/self/cgroup` and
/// `/proc/self/mountinfo`: a v1 hierarchy with the `cpu` controller if one
/// is mounted (then the v2 hierarchy has no `cpu` controller), else the v2
/// hierarchy. `None` if neither is there.
pub(crate) fn locate(cgroup: &str, mountinfo: &str) -> Option<(Version, PathBuf, PathBuf)> {
    let mounts: Vec<Mount<'_>> = mountinfo.lines().filter_map(Mount::parse).collect();
    for line in cgroup.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if controllers.split(',').any(|name| name == "cpu")
            && let Some(mount) = mounts.iter().find(|mount| mount.is_v1_cpu())
        {
            return Some((Version::V1, mount.dir_of(path), PathBuf::from(mount.point)));
        }
    }
    let path = cgroup.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mount = mounts.iter().find(|mount| mount.fstype == "cgroup2")?;
    Some((Version::V2, mount.dir_of(path), PathBuf::from(mount.point)))
}

/// One line of `/proc/self/mountinfo`: `ID PARENT MAJ:MIN ROOT POINT
/// OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS`.
struct Mount<'a> {
    root: &'a str,
    point: &'a str,
    fstype: &'a str,
    super_options: &'a str,
}

impl<'a> Mount<'a> {
    fn parse(line: &'a str) -> Option<Mount<'a>> {
        let (before, after) = line.split_once(" - ")?;
        let mut fields = before.split(' ');
        let root = fields.nth(3)?;
        let point = fields.next()?;
        let mut after = after.split(' ');
        let fstype = after.next()?;
        let _source = after.next()?;
        let super_options = after.next().unwrap_or("");
        Some(Mount {
            root,
            point,
            fstype,
            super_options,
        })
    }

    fn is_v1_cpu(&self) -> bool {
        self.fstype == "cgroup" && self.super_options.split(',').any(|option| option == "cpu")
    }

    /// The directory of cgroup `path` under this mount: the path below the
    /// hierarchy the mount shows (its root), or the mount point itself
    /// where the path is not below it (a cgroup namespace whose root is
    /// not the mount's).
    fn dir_of(&self, path: &str) -> PathBuf {
        let below = if self.root == "/" {
            Some(path)
        } else {
            path.strip_prefix(self.root)
                .filter(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        let mut dir = PathBuf::from(self.point);
        if let Some(below) = below {
            dir.push(below.trim_start_matches('/'));
        }
        dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpus(quota: Option<Option<Quota>>) -> Option<Option<f64>> {
        quota.map(|quota| quota.map(|quota| quota.cpus))
    }

    #[test]
    fn cpu_max_reads_a_quota_max_and_rejects_garbage() {
        assert_eq!(cpus(parse_cpu_max("50000 100000\n")), Some(Some(0.5)));
        assert_eq!(cpus(parse_cpu_max("150000 100000")), Some(Some(1.5)));
        assert_eq!(
            parse_cpu_max("25000 50000").unwrap().unwrap().period,
            Duration::from_millis(50)
        );
        assert_eq!(cpus(parse_cpu_max("max 100000\n")), Some(None));
        assert_eq!(cpus(parse_cpu_max("max")), Some(None));
        assert_eq!(cpus(parse_cpu_max("")), None);
        assert_eq!(cpus(parse_cpu_max("fifty 100000")), None);
        assert_eq!(cpus(parse_cpu_max("50000 0")), None);
        assert_eq!(cpus(parse_cpu_max("0 100000")), None);
        assert_eq!(cpus(parse_cpu_max("50000 100000 7")), None);
    }

    #[test]
    fn cfs_reads_a_quota_no_limit_and_rejects_garbage() {
        assert_eq!(cpus(parse_cfs("50000\n", "100000\n")), Some(Some(0.5)));
        assert_eq!(cpus(parse_cfs("-1\n", "100000\n")), Some(None));
        assert_eq!(cpus(parse_cfs("x", "100000")), None);
        assert_eq!(cpus(parse_cfs("50000", "0")), None);
        assert_eq!(cpus(parse_cfs("-7", "100000")), None);
    }

    #[test]
    fn stat_reads_throttling_in_each_version() {
        let v2 = "usage_usec 123\nnr_periods 10\nnr_throttled 3\nthrottled_usec 4500\n";
        assert_eq!(parse_stat(v2, Version::V2), (3, 4_500_000));
        let v1 = "nr_periods 10\nnr_throttled 2\nthrottled_time 7000000\n";
        assert_eq!(parse_stat(v1, Version::V1), (2, 7_000_000));
        assert_eq!(parse_stat("garbage\nnr_throttled x\n", Version::V1), (0, 0));
    }

    const V1_MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn a_v1_cpu_hierarchy_is_found_under_its_mount() {
        let cgroup = "4:memory:/x\n2:cpuacct:/\n1:cpu:/jobs/web\n0::/\n";
        assert_eq!(
            locate(cgroup, V1_MOUNTS),
            Some((
                Version::V1,
                PathBuf::from("/sys/fs/cgroup/cpu/jobs/web"),
                PathBuf::from("/sys/fs/cgroup/cpu")
            ))
        );
        // `cpu,cpuacct` mounted together, as systemd does.
        let together =
            "35 31 0:31 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
        let (_, leaf, _) = locate("3:cpu,cpuacct:/a\n", together).unwrap();
        assert_eq!(leaf, PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/a"));
    }

    #[test]
    fn v2_is_used_where_no_v1_cpu_hierarchy_is_mounted() {
        let mounts = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            locate("0::/system.slice/app.service\n", mounts),
            Some((
                Version::V2,
                PathBuf::from("/sys/fs/cgroup/system.slice/app.service"),
                PathBuf::from("/sys/fs/cgroup")
            ))
        );
        assert_eq!(
            locate("0::/\n", "1 0 0:1 / / rw - ext4 /dev/vda rw\n"),
            None
        );
        assert_eq!(locate("garbage", "garbage"), None);
    }

    #[test]
    fn a_mount_of_a_sub_hierarchy_and_a_namespace_map_to_the_mount_point() {
        // A container without a cgroup namespace: the mount shows its own
        // cgroup, whose path /proc/self/cgroup gives in full.
        let mounts = "30 23 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
        let (_, leaf, point) = locate("0::/docker/abc\n", mounts).unwrap();
        assert_eq!(leaf, point);
        let (_, leaf, _) = locate("0::/docker/abc/worker\n", mounts).unwrap();
        assert_eq!(leaf, PathBuf::from("/sys/fs/cgroup/worker"));
        // A path outside the mounted hierarchy: the mount point.
        let (_, leaf, _) = locate("0::/other\n", mounts).unwrap();
        assert_eq!(leaf, PathBuf::from("/sys/fs/cgroup"));
        // `/docker/abcd` is not below `/docker/abc`.
        let (_, leaf, _) = locate("0::/docker/abcd\n", mounts).unwrap();
        assert_eq!(leaf, PathBuf::from("/sys/fs/cgroup"));
    }

    /// A fake `/proc/self` and cgroup tree under a temporary directory.
    struct Tree(PathBuf);

    impl Tree {
        fn new(name: &str) -> Tree {
            let dir = std::env::temp_dir()
                .join(format!("brigade-cgroup-test-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(dir.join("proc")).unwrap();
            Tree(dir)
        }

        fn write(&self, path: &str, text: &str) {
            let path = self.0.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }

        fn proc_self(&self, cgroup: &str, fstype_and_options: &str) -> PathBuf {
            let mount = self.0.join("cg");
            self.write("proc/cgroup", cgroup);
            self.write(
                "proc/mountinfo",
                &format!(
                    "30 23 0:26 / {} rw - {fstype_and_options}\n",
                    mount.display()
                ),
            );
            self.0.join("proc")
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn the_tightest_ancestor_wins_and_is_read_again_after_a_change() {
        let tree = Tree::new("v2-nested");
        let proc_self = tree.proc_self("0::/outer/inner\n", "cgroup2 cgroup2 rw");
        tree.write("cg/outer/cpu.max", "150000 100000\n");
        tree.write("cg/outer/inner/cpu.max", "max 100000\n");
        tree.write(
            "cg/outer/inner/cpu.stat",
            "nr_throttled 4\nthrottled_usec 10\n",
        );
        let files = CgroupFiles::open(&proc_self).unwrap().expect("files found");
        assert_eq!(files.version(), Version::V2);
        let (limit, unparsable) = files.read_limit();
        assert_eq!(limit.map(|quota| quota.cpus), Some(1.5));
        assert_eq!(files.read_throttling(), (4, 10_000));
        assert!(unparsable.is_empty());
        // A live resize: the same open files give the new quota.
        tree.write("cg/outer/inner/cpu.max", "50000 100000\n");
        assert_eq!(files.read_limit().0.map(|quota| quota.cpus), Some(0.5));
        tree.write("cg/outer/inner/cpu.max", "max 100000\n");
        tree.write("cg/outer/cpu.max", "max 100000\n");
        assert_eq!(files.read_limit().0, None);
    }

    #[test]
    fn v1_files_give_the_limit_and_garbage_gives_none_and_the_file() {
        let tree = Tree::new("v1");
        let proc_self = tree.proc_self("1:cpu:/job\n", "cgroup cgroup rw,cpu");
        tree.write("cg/cpu.cfs_quota_us", "-1\n");
        tree.write("cg/cpu.cfs_period_us", "100000\n");
        tree.write("cg/job/cpu.cfs_quota_us", "50000\n");
        tree.write("cg/job/cpu.cfs_period_us", "100000\n");
        let files = CgroupFiles::open(&proc_self).unwrap().expect("files found");
        assert_eq!(files.version(), Version::V1);
        assert_eq!(files.read_limit().0.map(|quota| quota.cpus), Some(0.5));
        tree.write("cg/job/cpu.cfs_quota_us", "lots\n");
        let (limit, unparsable) = files.read_limit();
        assert_eq!(limit, None);
        assert_eq!(unparsable, vec![Unparsable(tree.0.join("cg/job"))]);
    }

    #[test]
    fn no_limit_file_anywhere_is_no_cgroup() {
        let tree = Tree::new("empty");
        let proc_self = tree.proc_self("0::/\n", "cgroup2 cgroup2 rw");
        std::fs::create_dir_all(tree.0.join("cg")).unwrap();
        assert!(CgroupFiles::open(&proc_self).unwrap().is_none());
    }
}
