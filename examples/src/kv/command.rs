//! The commands `kv` answers, with Redis's replies and error messages:
//! PING, GET, SET (plain form), DEL, INCR, CONFIG GET (an empty array),
//! COMMAND / COMMAND DOCS (an empty array, for redis-cli's start-up),
//! INFO (its memory section only) and QUIT. Names are case-insensitive. Anything else gets an error reply and
//! the connection stays open.

use super::resp;
use super::store::Store;

/// What the connection does after a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Read the next command.
    Continue,
    /// Send the replies so far, then close (QUIT).
    Close,
}

/// Runs the command `args` (name first) against `store`, appending its
/// reply to `out`. An empty `args` (an empty request) gets no reply.
pub fn execute(store: &Store, args: &[&[u8]], out: &mut Vec<u8>) -> After {
    let Some((name, rest)) = args.split_first() else {
        return After::Continue;
    };
    let name = name.to_ascii_lowercase();
    match (name.as_slice(), rest) {
        (b"ping", []) => resp::simple(out, "PONG"),
        (b"ping", [message]) => resp::bulk(out, message),
        (b"get", [key]) => match store.get(key) {
            Some(value) => resp::bulk(out, &value),
            None => resp::null(out),
        },
        (b"set", [key, value]) => {
            store.set(key, value);
            resp::simple(out, "OK");
        }
        (b"set", [_, _, ..]) => resp::error(
            out,
            "ERR SET options are not supported by this server (only SET key value)",
        ),
        (b"del", [_, ..]) => {
            let removed = rest.iter().filter(|key| store.remove(key)).count();
            resp::integer(out, removed as i64);
        }
        (b"incr", [key]) => incr(store, key, out),
        (b"config", [sub, ..]) => config(sub, rest.len(), out),
        (b"command", []) => resp::empty_array(out),
        (b"command", [sub, ..]) if sub.eq_ignore_ascii_case(b"docs") => resp::empty_array(out),
        (b"command", [sub, ..]) => unknown_subcommand(out, sub, "command"),
        (b"info", sections) => info(sections, out),
        (b"quit", _) => {
            resp::simple(out, "OK");
            return After::Close;
        }
        (b"ping" | b"get" | b"set" | b"del" | b"incr" | b"config", _) => {
            let name = String::from_utf8_lossy(&name);
            resp::error(
                out,
                &format!("ERR wrong number of arguments for '{name}' command"),
            );
        }
        _ => unknown_command(out, args),
    }
    After::Continue
}

/// `CONFIG GET pattern` answers an empty array (no settings to show):
/// redis-benchmark asks for `save` and `appendonly` at start-up and is
/// content without them.
fn config(sub: &[u8], args: usize, out: &mut Vec<u8>) {
    if !sub.eq_ignore_ascii_case(b"get") {
        unknown_subcommand(out, sub, "config");
    } else if args < 2 {
        resp::error(
            out,
            "ERR wrong number of arguments for 'config|get' command",
        );
    } else {
        resp::empty_array(out);
    }
}

/// `INFO [section ...]`: the memory section, as Redis names its fields,
/// for the default, `all`, `everything` and `memory`; an empty reply for
/// any other section, as Redis gives for one it does not know.
/// `used_memory` is the heap in use as glibc counts it (`mallinfo2`), the
/// live heap that `scripts/soak.sh --kv` samples; `used_memory_rss` is
/// `VmRSS`.
fn info(sections: &[&[u8]], out: &mut Vec<u8>) {
    let memory = sections.is_empty()
        || sections.iter().any(|section| {
            [&b"memory"[..], b"all", b"everything", b"default"]
                .iter()
                .any(|name| section.eq_ignore_ascii_case(name))
        });
    let mut text = String::new();
    if memory {
        let figure = |value: Option<u64>| value.map_or("unknown".to_owned(), |v| v.to_string());
        text = format!(
            "# Memory\r\nused_memory:{}\r\nused_memory_rss:{}\r\n",
            figure(crate::memory::heap_in_use()),
            figure(crate::memory::rss_bytes()),
        );
    }
    resp::bulk(out, text.as_bytes());
}

fn incr(store: &Store, key: &[u8], out: &mut Vec<u8>) {
    let mut shard = store.shard_of(key);
    let current = match shard.get(key) {
        None => 0,
        Some(value) => match parse_integer(value) {
            Some(number) => number,
            None => return resp::error(out, "ERR value is not an integer or out of range"),
        },
    };
    let Some(next) = current.checked_add(1) else {
        return resp::error(out, "ERR increment or decrement would overflow");
    };
    shard.insert(key.to_vec(), next.to_string().into_bytes());
    resp::integer(out, next);
}

/// Parses a value as Redis does for INCR: an optional `-`, then decimal
/// digits without leading zeros (`0` itself is fine), in range of `i64`;
/// no `+`, spaces or `-0`.
pub fn parse_integer(text: &[u8]) -> Option<i64> {
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    let canonical = match digits {
        [] => false,
        [b'0'] => digits.len() == text.len(),
        [first, ..] => *first != b'0' && digits.iter().all(u8::is_ascii_digit),
    };
    if !canonical {
        return None;
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

fn unknown_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    let quoted: Vec<String> = args[1..]
        .iter()
        .take(3)
        .map(|arg| format!("'{}'", shortened(arg)))
        .collect();
    resp::error(
        out,
        &format!(
            "ERR unknown command '{}', with args beginning with: {}",
            shortened(args[0]),
            quoted.join(" ")
        ),
    );
}

fn unknown_subcommand(out: &mut Vec<u8>, sub: &[u8], command: &str) {
    resp::error(
        out,
        &format!(
            "ERR unknown subcommand '{}' for '{command}'",
            shortened(sub)
        ),
    );
}

/// At most 64 bytes of `arg`, printable, for an error message.
fn shortened(arg: &[u8]) -> String {
    resp::printable(&arg[..arg.len().min(64)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs an inline command line; returns its reply as text.
    fn run(store: &Store, line: &str) -> String {
        let args: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        let mut out = Vec::new();
        assert_eq!(execute(store, &args, &mut out), After::Continue);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ping_get_set_del() {
        let store = Store::new();
        assert_eq!(run(&store, "PING"), "+PONG\r\n");
        assert_eq!(run(&store, "ping hello"), "$5\r\nhello\r\n");
        assert_eq!(run(&store, "GET a"), "$-1\r\n");
        assert_eq!(run(&store, "SET a xyz"), "+OK\r\n");
        assert_eq!(run(&store, "get a"), "$3\r\nxyz\r\n");
        assert_eq!(run(&store, "SET b 1"), "+OK\r\n");
        assert_eq!(run(&store, "DEL a b c"), ":2\r\n");
        assert_eq!(run(&store, "GET a"), "$-1\r\n");
    }

    #[test]
    fn incr_counts_and_rejects_non_integers() {
        let store = Store::new();
        assert_eq!(run(&store, "INCR n"), ":1\r\n");
        assert_eq!(run(&store, "INCR n"), ":2\r\n");
        assert_eq!(run(&store, "GET n"), "$1\r\n2\r\n");
        run(&store, "SET s abc");
        let not_integer = "-ERR value is not an integer or out of range\r\n";
        assert_eq!(run(&store, "INCR s"), not_integer);
        run(&store, "SET big 9223372036854775807");
        assert_eq!(
            run(&store, "INCR big"),
            "-ERR increment or decrement would overflow\r\n"
        );
        run(&store, "SET neg -5");
        assert_eq!(run(&store, "INCR neg"), ":-4\r\n");
    }

    #[test]
    fn integers_are_parsed_strictly() {
        for good in [
            "0",
            "7",
            "-7",
            "9223372036854775807",
            "-9223372036854775808",
        ] {
            assert!(parse_integer(good.as_bytes()).is_some(), "{good}");
        }
        for bad in [
            "",
            "-",
            "-0",
            "007",
            "+1",
            " 1",
            "1 ",
            "1.0",
            "9223372036854775808",
        ] {
            assert_eq!(parse_integer(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn config_get_and_command_are_empty_arrays() {
        let store = Store::new();
        assert_eq!(run(&store, "CONFIG GET save"), "*0\r\n");
        assert_eq!(run(&store, "config get appendonly"), "*0\r\n");
        assert_eq!(run(&store, "COMMAND"), "*0\r\n");
        assert_eq!(run(&store, "COMMAND DOCS"), "*0\r\n");
        assert!(run(&store, "CONFIG SET save x").starts_with("-ERR unknown subcommand 'SET'"));
        assert!(run(&store, "CONFIG GET").starts_with("-ERR wrong number of arguments"));
    }

    #[test]
    fn info_reports_the_memory_section() {
        let store = Store::new();
        for line in ["INFO", "info memory", "INFO server MEMORY", "INFO all"] {
            let reply = run(&store, line);
            let text = reply.split_once("\r\n").unwrap().1;
            assert!(
                text.starts_with("# Memory\r\nused_memory:"),
                "{line}: {reply}"
            );
            let field = |name: &str| -> u64 {
                let line = text.lines().find_map(|line| line.strip_prefix(name));
                line.unwrap().trim().parse().unwrap()
            };
            assert!(field("used_memory:") > 0, "{reply}");
            assert!(field("used_memory_rss:") > 0, "{reply}");
        }
        assert_eq!(run(&store, "INFO keyspace"), "$0\r\n\r\n");
    }

    #[test]
    fn errors_keep_the_connection_open() {
        let store = Store::new();
        assert_eq!(
            run(&store, "FLUSHALL now"),
            "-ERR unknown command 'FLUSHALL', with args beginning with: 'now'\r\n"
        );
        assert_eq!(
            run(&store, "GET"),
            "-ERR wrong number of arguments for 'get' command\r\n"
        );
        assert!(run(&store, "SET k v EX 10").starts_with("-ERR SET options are not supported"));
        assert_eq!(run(&store, "GET k"), "$-1\r\n");
        let mut out = Vec::new();
        let weird: [&[u8]; 2] = [b"x\r\n", b"\xff"];
        execute(&store, &weird, &mut out);
        assert_eq!(
            out,
            b"-ERR unknown command 'x\\x0d\\x0a', with args beginning with: '\\xff'\r\n"
        );
    }

    #[test]
    fn quit_closes_and_empty_requests_are_ignored() {
        let store = Store::new();
        let mut out = Vec::new();
        assert_eq!(execute(&store, &[b"QUIT"], &mut out), After::Close);
        assert_eq!(out, b"+OK\r\n");
        out.clear();
        assert_eq!(execute(&store, &[], &mut out), After::Continue);
        assert!(out.is_empty());
    }
}
