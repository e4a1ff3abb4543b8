//! Dates for `now`: RFC 3339 literals converted to Unix milliseconds at parse time, and the
//! proleptic Gregorian calendar arithmetic behind them (no time-zone database needed: every
//! instant is UTC or carries a numeric offset).

const MS_PER_DAY: i64 = 86_400_000;

/// Days since 1970-01-01 of the civil date `y-m-d` (Gregorian, proleptic; `m` 1–12).
/// Howard Hinnant's `days_from_civil`.
pub(super) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date `(y, m, d)` of a day count since 1970-01-01: the inverse of
/// [`days_from_civil`].
#[cfg(test)]
pub(super) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `(hour, minute, ISO weekday 1 = Monday … 7 = Sunday)` in UTC of a Unix time in milliseconds.
pub(super) fn clock(now_ms: u64) -> (u64, u64, u64) {
    let days = now_ms / MS_PER_DAY as u64;
    // 1970-01-01 was a Thursday (ISO 4).
    ((now_ms / 3_600_000) % 24, (now_ms / 60_000) % 60, (days + 3) % 7 + 1)
}

const FORMS: &str = "expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (seconds may have a fraction; \
                     `Z` may be an offset such as +02:00)";

/// Unix milliseconds of an RFC 3339 date (midnight UTC) or date-time (`Z` or a numeric offset,
/// optional fraction kept to the millisecond). The error says which part is wrong.
pub(super) fn parse_rfc3339(s: &str) -> Result<i64, String> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits.iter().all(u8::is_ascii_digit).then(|| digits.iter().fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
    };
    let sep = |at: usize, want: u8| b.get(at) == Some(&want);
    let (Some(y), Some(m), Some(d)) = (num(0, 4), num(5, 2), num(8, 2)) else {
        return Err(FORMS.into());
    };
    if !sep(4, b'-') || !sep(7, b'-') {
        return Err(FORMS.into());
    }
    if !(1..=12).contains(&m) {
        return Err(format!("month {m:02} is not 01–12"));
    }
    if d < 1 || d > days_in_month(y, m) {
        return Err(format!("day {d:02} does not exist in {y:04}-{m:02}"));
    }
    let day_ms = days_from_civil(y, m, d) * MS_PER_DAY;
    if b.len() == 10 {
        return Ok(day_ms);
    }
    if !matches!(b[10], b'T' | b't') || !sep(13, b':') || !sep(16, b':') {
        return Err(FORMS.into());
    }
    let (Some(hh), Some(mm), Some(ss)) = (num(11, 2), num(14, 2), num(17, 2)) else {
        return Err(FORMS.into());
    };
    if hh > 23 || mm > 59 || ss > 59 {
        return Err(format!("time {hh:02}:{mm:02}:{ss:02} is not within 00:00:00–23:59:59"));
    }
    let mut at = 19;
    let mut frac_ms = 0;
    if sep(at, b'.') {
        let digits = b[at + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return Err("a `.` in the seconds must be followed by digits".into());
        }
        frac_ms = num(at + 1, digits.min(3)).unwrap_or(0) * [100, 10, 1][digits.min(3) - 1];
        at += 1 + digits;
    }
    let offset_min = match b.get(at) {
        Some(b'Z' | b'z') if b.len() == at + 1 => 0,
        Some(sign @ (b'+' | b'-')) if b.len() == at + 6 && sep(at + 3, b':') => {
            let (Some(oh), Some(om)) = (num(at + 1, 2), num(at + 4, 2)) else {
                return Err(FORMS.into());
            };
            if oh > 23 || om > 59 {
                return Err(format!("offset {oh:02}:{om:02} is not within 00:00–23:59"));
            }
            if *sign == b'+' {
                oh * 60 + om
            } else {
                -(oh * 60 + om)
            }
        }
        _ => return Err(format!("{FORMS}; the time zone (`Z` or ±HH:MM) is missing or wrong")),
    };
    Ok(day_ms + ((hh * 60 + mm - offset_min) * 60 + ss) * 1000 + frac_ms)
}
