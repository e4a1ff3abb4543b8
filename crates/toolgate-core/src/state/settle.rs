//! One decision's state step as data: what to read, the bounds it is judged against, and what to
//! record. Every store answers it in one atomic step, so counting and recording cannot interleave
//! with another process's (a rate limit's last slot is taken once).

use super::{Level, EVICTED};

/// The loop guard's question for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopCheck {
    /// The canonical call key (tool + arguments).
    pub key: u128,
    /// Count calls recorded at or after this time (ms since the Unix epoch).
    pub since_ms: u64,
    /// The call is admitted while fewer than this many were counted.
    pub max: u32,
    /// Timestamps kept per key when recording (`max + 1`).
    pub keep: u32,
    /// The loop window (ms): how long a remote store keeps the counter.
    pub window_ms: u64,
}

/// One rate limit that applies to the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateCheck {
    /// Which counter: the limit's identity and the caller it is counted per (already hashed or
    /// escaped by the gate; stores use it as a key suffix verbatim).
    pub key: String,
    /// The fixed window's length (ms); windows start at multiples of it since the epoch.
    pub window_ms: u64,
    /// The call is admitted while fewer than this many were counted in the current window.
    pub max: u32,
}

/// A rate counter as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateSeen {
    /// Calls counted in the current window before this one.
    pub count: u32,
    /// When the current window ends (ms since the Unix epoch): the earliest retry.
    pub reset_ms: u64,
}

/// The state step of one decision (see [`super::StateStore::settle`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settle<'a> {
    /// The caller's loop/taint scope.
    pub scope: &'a str,
    /// The gate's `labels`, lowest first: `sink_max`, `raise` and [`Observed::taint`] are
    /// levels of these (the store keeps names; see [`super::Level`]).
    pub labels: &'a [String],
    /// The time of the decision (ms since the Unix epoch).
    pub now_ms: u64,
    /// The loop guard, when one applies.
    pub loop_check: Option<LoopCheck>,
    /// A sink's clearance: the scope's taint is read and must not exceed it.
    pub sink_max: Option<Level>,
    /// The rate limits that apply.
    pub rates: Vec<RateCheck>,
    /// Record the call (false: only read, e.g. before asking for a confirmation).
    pub record: bool,
    /// Record only when [`Settle::admits`] (false in shadow mode: record regardless).
    pub enforce: bool,
    /// Raise the scope's taint to this level when recording (the tool's output label).
    pub raise: Option<Level>,
}

/// What a store read for a [`Settle`] (before recording), and whether it recorded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Observed {
    /// Calls with the same key in the loop window (0 without a loop check).
    pub loop_seen: u32,
    /// The scope's taint (0 without a sink check).
    pub taint: Level,
    /// One per [`Settle::rates`], in order.
    pub rates: Vec<RateSeen>,
    /// Whether the call was recorded.
    pub recorded: bool,
}

impl Settle<'_> {
    /// Whether what was read lets the call through: under the loop bound, taint within the
    /// sink's clearance (an [`EVICTED`] scope never is), every rate counter under its max. Stores
    /// apply exactly this rule when deciding to record (the Redis script mirrors it).
    pub fn admits(&self, o: &Observed) -> bool {
        let loop_ok = self.loop_check.is_none_or(|l| o.loop_seen < l.max);
        let taint_ok = self.sink_max.is_none_or(|m| o.taint != EVICTED && o.taint <= m);
        let rates_ok = self.rates.iter().zip(&o.rates).all(|(r, s)| s.count < r.max) && o.rates.len() == self.rates.len();
        loop_ok && taint_ok && rates_ok
    }

    /// Whether a store seeing `o` records the call.
    pub fn records(&self, o: &Observed) -> bool {
        self.record && (!self.enforce || self.admits(o))
    }
}

/// The start of the fixed window holding `now_ms` (`window_ms` 0 is treated as 1).
pub fn window_start(now_ms: u64, window_ms: u64) -> u64 {
    let w = window_ms.max(1);
    now_ms - now_ms % w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q() -> Settle<'static> {
        Settle { scope: "s", labels: &[], now_ms: 10, loop_check: None, sink_max: None, rates: Vec::new(), record: true, enforce: true, raise: None }
    }

    #[test]
    fn admits_each_bound() {
        let mut s = q();
        assert!(s.admits(&Observed::default()));
        s.loop_check = Some(LoopCheck { key: 1, since_ms: 0, max: 2, keep: 3, window_ms: 1000 });
        assert!(s.admits(&Observed { loop_seen: 1, ..Default::default() }));
        assert!(!s.admits(&Observed { loop_seen: 2, ..Default::default() }));
        s.loop_check = None;
        s.sink_max = Some(1);
        assert!(s.admits(&Observed { taint: 1, ..Default::default() }));
        assert!(!s.admits(&Observed { taint: 2, ..Default::default() }));
        assert!(!s.admits(&Observed { taint: EVICTED, ..Default::default() }));
        s.sink_max = None;
        s.rates = vec![RateCheck { key: "k".into(), window_ms: 1000, max: 3 }];
        let seen = |count| Observed { rates: vec![RateSeen { count, reset_ms: 1000 }], ..Default::default() };
        assert!(s.admits(&seen(2)));
        assert!(!s.admits(&seen(3)));
        assert!(!s.admits(&Observed::default()), "a missing rate answer never admits");
    }

    #[test]
    fn records_only_when_asked_and_admitted_or_shadow() {
        let mut s = q();
        s.sink_max = Some(0);
        let tainted = Observed { taint: 1, ..Default::default() };
        assert!(!s.records(&tainted));
        s.enforce = false;
        assert!(s.records(&tainted));
        s.record = false;
        assert!(!s.records(&Observed::default()));
    }

    #[test]
    fn windows() {
        assert_eq!(window_start(12_345, 1000), 12_000);
        assert_eq!(window_start(12_345, 0), 12_345);
    }
}
