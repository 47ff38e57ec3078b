//! Status codes, statuses and the packing of export return values (abi.md §2.1, §3.4).

use std::fmt;

/// A `framework.Code`. Any i32 crosses the boundary unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Code(pub i32);

impl Code {
    /// Success.
    pub const SUCCESS: Code = Code(0);
    /// Error: an internal plugin error; the pod is retried.
    pub const ERROR: Code = Code(1);
    /// Unschedulable: preemption may help.
    pub const UNSCHEDULABLE: Code = Code(2);
    /// UnschedulableAndUnresolvable: preemption cannot help.
    pub const UNSCHEDULABLE_AND_UNRESOLVABLE: Code = Code(3);
    /// Wait (Permit only).
    pub const WAIT: Code = Code(4);
    /// Skip: the plugin has nothing to do for this pod.
    pub const SKIP: Code = Code(5);
    /// Pending (Kubernetes >= 1.27).
    pub const PENDING: Code = Code(6);

    /// The Go name of a known code.
    pub fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "Success",
            1 => "Error",
            2 => "Unschedulable",
            3 => "UnschedulableAndUnresolvable",
            4 => "Wait",
            5 => "Skip",
            6 => "Pending",
            _ => return None,
        })
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "Code({})", self.0),
        }
    }
}

/// The outcome of a hook: a code and a reason (sent to the host when non-empty).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// The code.
    pub code: Code,
    /// The reason; becomes the framework status message.
    pub reason: String,
}

impl Status {
    /// Success without a reason (allocation-free).
    pub const SUCCESS: Status = Status { code: Code::SUCCESS, reason: String::new() };

    /// A status with any code and reason.
    pub fn new(code: Code, reason: impl Into<String>) -> Self {
        Status { code, reason: reason.into() }
    }
    /// Success.
    pub fn success() -> Self {
        Status::SUCCESS
    }
    /// Error with a reason.
    pub fn error(reason: impl Into<String>) -> Self {
        Status::new(Code::ERROR, reason)
    }
    /// Unschedulable with a reason.
    pub fn unschedulable(reason: impl Into<String>) -> Self {
        Status::new(Code::UNSCHEDULABLE, reason)
    }
    /// UnschedulableAndUnresolvable with a reason.
    pub fn unresolvable(reason: impl Into<String>) -> Self {
        Status::new(Code::UNSCHEDULABLE_AND_UNRESOLVABLE, reason)
    }
    /// Wait (Permit) with a reason.
    pub fn wait(reason: impl Into<String>) -> Self {
        Status::new(Code::WAIT, reason)
    }
    /// Skip.
    pub fn skip() -> Self {
        Status::new(Code::SKIP, String::new())
    }
    /// Whether the code is Success.
    pub fn is_success(&self) -> bool {
        self.code == Code::SUCCESS
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.reason.is_empty() {
            write!(f, "{}", self.code)
        } else {
            write!(f, "{}: {}", self.code, self.reason)
        }
    }
}

/// `NominatingMode` of a PostFilter result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NominatingMode(pub i32);

impl NominatingMode {
    /// Keep the pod's current nomination.
    pub const NOOP: NominatingMode = NominatingMode(0);
    /// Replace it with the given node name.
    pub const OVERRIDE: NominatingMode = NominatingMode(1);
}

/// The nomination a PostFilter plugin proposes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NominatingInfo {
    /// Node to nominate (sent only when non-empty).
    pub node_name: String,
    /// Mode.
    pub mode: NominatingMode,
}

/// `score`'s i64: score in the high 32 bits, status code in the low 32 bits.
pub fn pack_score(score: i32, code: Code) -> i64 {
    pack_hi_lo(score, code.0 as u32)
}

/// `postfilter`'s i64: nominating mode high, status code low.
pub fn pack_postfilter(mode: NominatingMode, code: Code) -> i64 {
    pack_hi_lo(mode.0, code.0 as u32)
}

/// `permit`'s i64: status code high, timeout in milliseconds low (note the reversed order).
pub fn pack_permit(code: Code, timeout_ms: u32) -> i64 {
    pack_hi_lo(code.0, timeout_ms)
}

fn pack_hi_lo(hi: i32, lo: u32) -> i64 {
    (i64::from(hi) << 32) | i64::from(lo)
}

/// Splits an i64 into (high i32, low u32); the inverse of the pack functions.
pub fn unpack(v: i64) -> (i32, u32) {
    ((v >> 32) as i32, v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips_extremes() {
        let vals = [i32::MIN, -1, 0, 1, 10, i32::MAX];
        for &hi in &vals {
            for &lo in &vals {
                let s = pack_score(hi, Code(lo));
                assert_eq!(unpack(s), (hi, lo as u32));
                let p = pack_postfilter(NominatingMode(hi), Code(lo));
                assert_eq!(unpack(p), (hi, lo as u32));
                let q = pack_permit(Code(hi), lo as u32);
                assert_eq!(unpack(q), (hi, lo as u32));
            }
        }
        assert_eq!(pack_score(10, Code::SUCCESS), 10i64 << 32);
        assert_eq!(pack_score(0, Code::ERROR), 1);
        assert_eq!(pack_permit(Code::WAIT, 10_000), (4i64 << 32) | 10_000);
        assert_eq!(pack_permit(Code::SUCCESS, u32::MAX), u32::MAX as i64);
        assert_eq!(pack_postfilter(NominatingMode::OVERRIDE, Code::SUCCESS), 1i64 << 32);
    }

    #[test]
    fn status_helpers() {
        assert!(Status::SUCCESS.is_success());
        assert_eq!(Status::unschedulable("x").code, Code::UNSCHEDULABLE);
        assert_eq!(Status::unresolvable("x").code, Code(3));
        assert_eq!(Status::wait("w").to_string(), "Wait: w");
        assert_eq!(Status::new(Code(99), "").to_string(), "Code(99)");
        assert_eq!(Status::skip().code.name(), Some("Skip"));
    }
}
