//! Wall-clock helpers: the gate's clock (replaceable in tests) and RFC 3339 formatting.

use std::sync::Arc;

/// The clock a gate reads: milliseconds since the Unix epoch.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> u64 + Send + Sync>);

impl Clock {
    /// The system clock.
    pub fn system() -> Clock {
        Clock(Arc::new(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)))
    }

    /// A clock reading `f` (tests: expiry, windows).
    pub fn from_fn(f: impl Fn() -> u64 + Send + Sync + 'static) -> Clock {
        Clock(Arc::new(f))
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        (self.0)()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}

/// `ms` since the epoch as RFC 3339 UTC with milliseconds (`2026-11-30T03:42:04.123Z`). The
/// date-and-seconds part is cached per thread (audit records ask for it on every decision).
pub fn rfc3339(ms: u64) -> String {
    thread_local! {
        static LAST: std::cell::RefCell<(u64, String)> = const { std::cell::RefCell::new((u64::MAX, String::new())) };
    }
    let secs = ms / 1000;
    let mut out = String::with_capacity(24);
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != secs {
            let (y, m, d) = civil_from_days((secs / 86_400) as i64);
            let rem = secs % 86_400;
            last.1 = format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}", rem / 3600, rem / 60 % 60, rem % 60);
            last.0 = secs;
        }
        out.push_str(&last.1);
    });
    let frac = ms % 1000;
    out.push('.');
    out.push(char::from(b'0' + (frac / 100) as u8));
    out.push(char::from(b'0' + (frac / 10 % 10) as u8));
    out.push(char::from(b'0' + (frac % 10) as u8));
    out.push('Z');
    out
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_known_instants() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(super::rfc3339(1_796_010_124_123), "2026-11-30T03:42:04.123Z");
        assert_eq!(super::rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
