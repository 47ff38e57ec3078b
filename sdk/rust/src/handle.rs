//! `framework.Handle` functions: the event recorder and waiting pods.

use crate::api::KObject;
use crate::json::write_str;
use crate::pb;
use crate::pod::OwnedPod;
use crate::sys;

/// Event type `Normal`.
pub const NORMAL: &str = "Normal";
/// Event type `Warning`.
pub const WARNING: &str = "Warning";

fn write_ref(out: &mut String, o: Option<&dyn KObject>) {
    let (kind, api, name, ns, uid, rv) = match o {
        Some(o) => (o.kind(), o.api_version(), o.name(), o.namespace(), o.uid(), o.resource_version()),
        None => ("", "", "", "", "", ""),
    };
    let fields = [
        ("Kind", kind),
        ("APIVersion", api),
        ("Name", name),
        ("Namespace", ns),
        ("UID", uid),
        ("ResourceVersion", rv),
    ];
    out.push('{');
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(k);
        out.push_str("\":");
        write_str(out, v);
    }
    out.push('}');
}

/// The `EventMessage` JSON sent to `handle.eventrecorder.eventf` (Go field names).
pub fn event_message(
    regarding: Option<&dyn KObject>,
    related: Option<&dyn KObject>,
    event_type: &str,
    reason: &str,
    action: &str,
    note: &str,
) -> String {
    let mut out = String::with_capacity(256);
    out.push_str("{\"RegardingReference\":");
    write_ref(&mut out, regarding);
    out.push_str(",\"RelatedReference\":");
    write_ref(&mut out, related);
    for (k, v) in [("Eventtype", event_type), ("Reason", reason), ("Action", action), ("Note", note)] {
        out.push_str(",\"");
        out.push_str(k);
        out.push_str("\":");
        write_str(&mut out, v);
    }
    out.push('}');
    out
}

/// Records a Kubernetes event through the scheduler's event recorder
/// (`EventRecorder().Eventf(regarding, related, type, reason, action, note)`).
/// Note: upstream's Go host uses `note` as a printf format, so avoid `%` in it.
pub fn eventf(
    regarding: Option<&dyn KObject>,
    related: Option<&dyn KObject>,
    event_type: &str,
    reason: &str,
    action: &str,
    note: &str,
) {
    let msg = event_message(regarding, related, event_type, reason, action, note);
    unsafe { sys::eventf(msg.as_ptr(), msg.len() as u32) };
}

/// Rejects the waiting pod with this uid; true if a waiting pod was found and rejected.
pub fn reject_waiting_pod(uid: &str) -> bool {
    let mut out = [0u8; 8];
    unsafe { sys::reject_waiting_pod(uid.as_ptr(), uid.len() as u32, out.as_mut_ptr(), 8) };
    u64::from_le_bytes(out) != 0
}

/// What the host wrote into a waiting-pod buffer pre-filled with 0xFF.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    /// 8 zero bytes: no waiting pod.
    NoPod,
    /// A pod of this many bytes.
    Pod(usize),
    /// The buffer was too small; retry with this many bytes.
    Grow(usize),
}

fn answer(buf: &[u8]) -> Answer {
    if buf[..8].iter().all(|b| *b == 0) {
        return Answer::NoPod;
    }
    if buf[0] != 0xff {
        return Answer::Pod(pb::message_len(buf));
    }
    // Untouched (upstream writes nothing when the pod does not fit), or wasmsched's
    // `ff ff ff ff <u32 LE needed length>`.
    let mut n = [0u8; 4];
    n.copy_from_slice(&buf[4..8]);
    let need = u32::from_le_bytes(n) as usize;
    if buf[..4] == [0xff; 4] && need != u32::MAX as usize && need > buf.len() {
        Answer::Grow(need)
    } else {
        Answer::Grow(buf.len() * 8)
    }
}

/// The waiting pod with this uid, if any.
///
/// The host writes the pod only when it fits and returns no length, so the buffer is
/// pre-filled with 0xFF (which cannot start a protobuf field): "no pod" shows as 8 zero
/// bytes, "too small" as an untouched buffer or, with wasmsched's host, `ff ff ff ff` and
/// the needed size; the pod's length is where its top-level fields end.
pub fn get_waiting_pod(uid: &str) -> Option<OwnedPod> {
    let mut size = 4096usize;
    while size <= 64 << 20 {
        let mut buf = vec![0xffu8; size];
        unsafe { sys::get_waiting_pod(uid.as_ptr(), uid.len() as u32, buf.as_mut_ptr(), size as u32) };
        match answer(&buf) {
            Answer::NoPod => return None,
            Answer::Pod(n) => {
                buf.truncate(n);
                return Some(OwnedPod(buf));
            }
            Answer::Grow(n) => size = n,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ObjectRef, Pod};
    use crate::pb::Writer;
    use crate::testing;

    #[test]
    fn event_message_json_matches_go_names() {
        let pod = ObjectRef {
            kind: "Pod".into(),
            api_version: "v1".into(),
            name: "good-pod".into(),
            namespace: "test".into(),
            uid: "384900cd".into(),
            resource_version: String::new(),
        };
        let got = event_message(Some(&pod), None, "PreScore", "not match lastNumber", "Skip", "");
        assert_eq!(
            got,
            concat!(
                r#"{"RegardingReference":{"Kind":"Pod","APIVersion":"v1","Name":"good-pod","Namespace":"test","UID":"384900cd","ResourceVersion":""},"#,
                r#""RelatedReference":{"Kind":"","APIVersion":"","Name":"","Namespace":"","UID":"","ResourceVersion":""},"#,
                r#""Eventtype":"PreScore","Reason":"not match lastNumber","Action":"Skip","Note":""}"#
            )
        );
        let parsed = crate::json::parse_str(&got).unwrap();
        assert_eq!(parsed.get("RegardingReference").unwrap().get("Name").unwrap().as_str(), Some("good-pod"));
    }

    #[test]
    fn eventf_sends_message() {
        testing::reset();
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(1, "p").string(3, "ns").string(5, "u").string(6, "7");
        });
        let b = w.finish();
        eventf(Some(&Pod::new(&b)), None, NORMAL, "r", "a", "n \"q\"");
        let sent = testing::last_result_str("handle.eventrecorder.eventf").unwrap();
        let v = crate::json::parse_str(&sent).unwrap();
        let r = v.get("RegardingReference").unwrap();
        assert_eq!(r.get("Kind").unwrap().as_str(), Some("Pod"));
        assert_eq!(r.get("ResourceVersion").unwrap().as_str(), Some("7"));
        assert_eq!(v.get("Note").unwrap().as_str(), Some("n \"q\""));
    }

    #[test]
    fn reject_waiting_pod_reads_the_flag() {
        testing::reset();
        testing::set_rejectable("u1");
        assert!(reject_waiting_pod("u1"));
        assert!(!reject_waiting_pod("u2"));
    }

    #[test]
    fn waiting_pod_answers() {
        let mut buf = vec![0xffu8; 64];
        assert_eq!(answer(&buf), Answer::Grow(512));
        buf[..8].copy_from_slice(&[0; 8]);
        assert_eq!(answer(&buf), Answer::NoPod);
        buf[..8].copy_from_slice(&[0xff, 0xff, 0xff, 0xff, 100, 0, 0, 0]);
        assert_eq!(answer(&buf), Answer::Grow(100));
        // A pod followed by zeroes (wasmsched) or by the 0xFF filler (upstream).
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(1, "p");
        });
        let pod = w.finish();
        for filler in [0u8, 0xff] {
            let mut b = pod.clone();
            b.resize(64, filler);
            assert_eq!(answer(&b), Answer::Pod(pod.len()));
        }
    }

    #[test]
    fn get_waiting_pod_sizes() {
        testing::reset();
        assert_eq!(get_waiting_pod("none"), None);
        for len in [10usize, 5000, 100_000] {
            let mut w = Writer::new();
            w.message(1, |m| {
                m.string(1, "w").string(5, "uid");
            })
            .bytes(2, &vec![b'x'; len]);
            let b = w.finish();
            let uid = format!("u{}", len);
            testing::add_waiting_pod(&uid, b.clone());
            let got = get_waiting_pod(&uid).unwrap();
            assert_eq!(got.0, b);
            assert_eq!(got.get().name(), "w");
        }
    }
}
