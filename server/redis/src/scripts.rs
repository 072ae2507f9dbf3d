//! The Lua scripts every write runs, each atomic in Redis. They touch the keys exactly as omp's
//! `OMP_APPEND`, `OMP_WRITE_FULL` and `OMP_UPDATE_TITLE` do (the value, `meta` path → mtime,
//! `title` path → title JSON); the append also carries omp's expected-size rule, so a line is
//! only ever appended right after the bytes the session has read.

use redis::Script;
use std::sync::OnceLock;

/// `KEYS`: value, meta. `ARGV`: line(s), path, mtime ms, expected length. Returns `{1, new
/// length}`, or `{0, actual length}` (`-1`: no value) with nothing written.
const APPEND_IF: &str = r#"-- sessiontree append (omp OMP_APPEND, guarded by the expected size)
local actual = -1
if redis.call("EXISTS", KEYS[1]) == 1 then
	actual = redis.call("STRLEN", KEYS[1])
end
if actual ~= tonumber(ARGV[4]) then
	return {0, actual}
end
local size = redis.call("APPEND", KEYS[1], ARGV[1])
redis.call("HSET", KEYS[2], ARGV[2], ARGV[3])
return {1, size}"#;

/// `KEYS`: value, meta, title. `ARGV`: contents, path, mtime ms, "1" when a title is given, title
/// JSON, expected length (`-1`: the value must not exist). Returns as [`APPEND_IF`].
const WRITE_FULL: &str = r#"-- sessiontree write (omp OMP_WRITE_FULL)
local actual = -1
if redis.call("EXISTS", KEYS[1]) == 1 then
	actual = redis.call("STRLEN", KEYS[1])
end
if actual ~= tonumber(ARGV[6]) then
	return {0, actual}
end
redis.call("SET", KEYS[1], ARGV[1])
redis.call("HSET", KEYS[2], ARGV[2], ARGV[3])
if ARGV[4] == "1" then
	redis.call("HSET", KEYS[3], ARGV[2], ARGV[5])
else
	redis.call("HDEL", KEYS[3], ARGV[2])
end
return {1, string.len(ARGV[1])}"#;

/// `KEYS`: meta, title. `ARGV`: path, mtime ms, title JSON.
const UPDATE_TITLE: &str = r#"-- sessiontree title (omp OMP_UPDATE_TITLE)
redis.call("HSET", KEYS[1], ARGV[1], ARGV[2])
redis.call("HSET", KEYS[2], ARGV[1], ARGV[3])
return 1"#;

fn script(cell: &'static OnceLock<Script>, text: &str) -> &'static Script {
    cell.get_or_init(|| Script::new(text))
}

pub(crate) fn append_if() -> &'static Script {
    static CELL: OnceLock<Script> = OnceLock::new();
    script(&CELL, APPEND_IF)
}

pub(crate) fn write_full() -> &'static Script {
    static CELL: OnceLock<Script> = OnceLock::new();
    script(&CELL, WRITE_FULL)
}

pub(crate) fn update_title() -> &'static Script {
    static CELL: OnceLock<Script> = OnceLock::new();
    script(&CELL, UPDATE_TITLE)
}
