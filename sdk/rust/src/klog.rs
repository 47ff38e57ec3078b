//! klog-style logging through the host (`k8s.io/klog`).
//!
//! Messages below the configured `logSeverity` (read once from the host) are dropped
//! before they are formatted, so disabled logging costs one comparison.

use crate::api::KObject;
use crate::sys;
use std::cell::{Cell, RefCell};
use std::fmt::{self, Display, Write};

/// Info severity.
pub const INFO: i32 = 0;
/// Warning severity.
pub const WARNING: i32 = 1;
/// Error severity.
pub const ERROR: i32 = 2;
/// Fatal severity.
pub const FATAL: i32 = 3;

thread_local! {
    static SEVERITY: Cell<Option<i32>> = const { Cell::new(None) };
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn reset_cache() {
    SEVERITY.with(|s| s.set(None));
}

/// The configured `logSeverity` (cached after the first call).
pub fn severity() -> i32 {
    SEVERITY.with(|s| match s.get() {
        Some(v) => v,
        None => {
            let v = unsafe { sys::severity() };
            s.set(Some(v));
            v
        }
    })
}

/// Whether messages of `severity` are sent to the host.
pub fn enabled(severity_: i32) -> bool {
    severity_ >= severity()
}

fn send(severity_: i32, msg: &dyn Display) {
    with_buffer(|out| {
        let _ = write!(Plain(out), "{}", msg);
        if out.last() != Some(&b'\n') {
            out.push(b'\n');
        }
        unsafe { sys::log(severity_, out.as_ptr(), out.len() as u32) };
    })
}

thread_local! {
    /// The buffer messages are encoded into, reused so that a log costs no allocation once
    /// it has grown to the size of the messages (a hook may log on every node).
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with the shared buffer emptied, or with a fresh one if it is in use (a
/// `Display` value that itself logs).
fn with_buffer<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    BUFFER.with(|b| match b.try_borrow_mut() {
        Ok(mut buf) => {
            buf.clear();
            f(&mut buf)
        }
        Err(_) => f(&mut Vec::new()),
    })
}

/// `fmt::Write` into a byte buffer.
struct Plain<'a>(&'a mut Vec<u8>);

impl Write for Plain<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// `fmt::Write` into a byte buffer, NULs replaced by U+FFFD (the host's list is
/// NUL-separated).
struct Bytes<'a>(&'a mut Vec<u8>);

impl Write for Bytes<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if !s.as_bytes().contains(&0) {
            // the common case, without the char-pattern splitter (memchr)
            self.0.extend_from_slice(s.as_bytes());
            return Ok(());
        }
        let mut parts = s.split('\0');
        if let Some(first) = parts.next() {
            self.0.extend_from_slice(first.as_bytes());
        }
        for part in parts {
            self.0.extend_from_slice("\u{FFFD}".as_bytes());
            self.0.extend_from_slice(part.as_bytes());
        }
        Ok(())
    }
}

/// `klog.Info`: an unstructured info message (a newline is appended if missing).
pub fn info(msg: impl Display) {
    if enabled(INFO) {
        send(INFO, &msg);
    }
}

/// `klog.Error`: an unstructured error message.
pub fn error(msg: impl Display) {
    if enabled(ERROR) {
        send(ERROR, &msg);
    }
}

/// Encodes key/value pairs as the NUL-terminated list `logs` expects. Keys that are
/// empty are dropped with their value; an empty value is sent as `""` because the host
/// skips empty entries (which would shift the pairs); NULs inside strings become U+FFFD.
pub fn encode_kvs(kvs: &[(&str, &dyn Display)]) -> String {
    let mut out = Vec::new();
    encode_kvs_into(&mut out, kvs);
    // Only whole `str`s and U+FFFD were written: valid UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn encode_kvs_into(out: &mut Vec<u8>, kvs: &[(&str, &dyn Display)]) {
    for (k, v) in kvs {
        if k.is_empty() {
            continue;
        }
        let _ = Bytes(out).write_str(k);
        out.push(0);
        let start = out.len();
        let _ = write!(Bytes(out), "{}", v);
        if out.len() == start {
            out.extend_from_slice(b"\"\"");
        }
        out.push(0);
    }
}

fn send_s(severity_: i32, msg: &str, kvs: &[(&str, &dyn Display)]) {
    with_buffer(|out| {
        encode_kvs_into(out, kvs);
        unsafe { sys::logs(severity_, msg.as_ptr(), msg.len() as u32, out.as_ptr(), out.len() as u32) };
    })
}

/// `klog.InfoS`: a structured info message with key/value pairs.
pub fn info_s(msg: &str, kvs: &[(&str, &dyn Display)]) {
    if enabled(INFO) {
        send_s(INFO, msg, kvs);
    }
}

/// `klog.ErrorS`: a structured error message; `err` is sent first as the `err` value.
pub fn error_s(err: &dyn Display, msg: &str, kvs: &[(&str, &dyn Display)]) {
    if enabled(ERROR) {
        let mut all: Vec<(&str, &dyn Display)> = Vec::with_capacity(kvs.len() + 1);
        all.push(("err", err));
        all.extend_from_slice(kvs);
        send_s(ERROR, msg, &all);
    }
}

/// `klog.KObj`: renders `namespace/name`, or `name` when the namespace is empty.
pub struct KObj<'a>(pub &'a dyn KObject);

impl Display for KObj<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0.namespace();
        if !ns.is_empty() {
            f.write_str(ns)?;
            f.write_str("/")?;
        }
        f.write_str(self.0.name())
    }
}

/// Shorthand for [`KObj`].
pub fn kobj(o: &dyn KObject) -> KObj<'_> {
    KObj(o)
}

/// `klog.KObjSlice`: renders `[a ns/b]`, `[]` when empty.
pub struct KObjSlice<'a, T: KObject>(pub &'a [T]);

impl<T: KObject> Display for KObjSlice<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, o) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}", KObj(o))?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ObjectRef;
    use crate::testing::{self, LogLine};

    fn obj(ns: &str, name: &str) -> ObjectRef {
        ObjectRef { namespace: ns.into(), name: name.into(), ..Default::default() }
    }

    #[test]
    fn info_appends_newline_once() {
        testing::reset();
        info("hello");
        info("hi\n");
        info(format_args!("{} {}", 1, 2));
        let msgs: Vec<_> = testing::logs().into_iter().map(|l| l.message).collect();
        assert_eq!(msgs, vec!["hello\n", "hi\n", "1 2\n"]);
    }

    #[test]
    fn severity_gating_reads_host_once() {
        testing::reset();
        testing::set_severity(ERROR);
        info("dropped");
        info_s("dropped", &[]);
        error("kept");
        error_s(&"boom", "failed", &[("pod", &"p")]);
        assert_eq!(
            testing::logs(),
            vec![
                LogLine { severity: ERROR, message: "kept\n".into(), kvs: vec![] },
                LogLine {
                    severity: ERROR,
                    message: "failed".into(),
                    kvs: vec!["err".into(), "boom".into(), "pod".into(), "p".into()],
                },
            ]
        );
        assert_eq!(testing::calls("severity").len(), 1);
    }

    #[test]
    fn structured_kvs() {
        testing::reset();
        let pod = obj("ns", "p");
        info_s("execute PreScore on NodeNumber plugin", &[("pod", &kobj(&pod))]);
        let l = &testing::logs()[0];
        assert_eq!(l.message, "execute PreScore on NodeNumber plugin");
        assert_eq!(l.kvs, vec!["pod", "ns/p"]);
        assert_eq!(
            encode_kvs(&[("a", &1), ("", &"x"), ("b", &""), ("c", &"x\0y")]),
            "a\u{0}1\0b\0\"\"\0c\0x\u{FFFD}y\0"
        );
    }

    #[test]
    fn kobj_rendering() {
        assert_eq!(kobj(&obj("", "n")).to_string(), "n");
        assert_eq!(kobj(&obj("ns", "p")).to_string(), "ns/p");
        assert_eq!(KObjSlice(&[obj("", "a"), obj("ns", "b")]).to_string(), "[a ns/b]");
        assert_eq!(KObjSlice::<ObjectRef>(&[]).to_string(), "[]");
    }

    /// A value whose rendering logs (the shared buffer is then in use).
    struct Chatty;

    impl Display for Chatty {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            info_s("inner", &[("k", &"v")]);
            f.write_str("outer-value")
        }
    }

    #[test]
    fn buffer_reuse_keeps_each_message_whole() {
        testing::reset();
        info_s("long", &[("key", &"a".repeat(300))]);
        info_s("short", &[("k", &"b")]);
        info_s("outer", &[("v", &Chatty), ("n", &7)]);
        info("line\0with nul");
        let logs = testing::logs();
        assert_eq!(logs[0].kvs, vec!["key".to_string(), "a".repeat(300)]);
        assert_eq!(logs[1].kvs, vec!["k", "b"]);
        assert_eq!((logs[2].message.as_str(), logs[2].kvs.clone()), ("inner", vec!["k".into(), "v".into()]));
        assert_eq!(logs[3].message, "outer");
        assert_eq!(logs[3].kvs, vec!["v", "outer-value", "n", "7"]);
        // an unstructured message is sent as written (NULs are only special in key/values)
        assert_eq!(logs[4].message, "line\0with nul\n");
    }
}
