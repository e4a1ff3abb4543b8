use super::super::time::{civil_from_days, clock, days_from_civil, parse_rfc3339};
use super::{eval_in, t, Facts};
use crate::policy::condition::Truth::{False, True};

#[test]
fn civil_round_trips() {
    assert_eq!(days_from_civil(1970, 1, 1), 0);
    assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    assert_eq!(days_from_civil(1969, 12, 31), -1);
    assert_eq!(days_from_civil(0, 3, 1), -719_468);
    for z in (-800_000..3_000_000).step_by(997) {
        let (y, m, d) = civil_from_days(z);
        assert_eq!(days_from_civil(y, m, d), z, "{y}-{m}-{d}");
    }
}

#[test]
fn rfc3339_forms() {
    assert_eq!(parse_rfc3339("1970-01-01"), Ok(0));
    assert_eq!(parse_rfc3339("1970-01-01T00:00:01Z"), Ok(1000));
    assert_eq!(parse_rfc3339("1970-01-01t00:00:01z"), Ok(1000));
    assert_eq!(parse_rfc3339("1970-01-01T00:00:01.5Z"), Ok(1500));
    assert_eq!(parse_rfc3339("1970-01-01T00:00:01.123456Z"), Ok(1123));
    assert_eq!(parse_rfc3339("1970-01-01T02:00:00+02:00"), Ok(0));
    assert_eq!(parse_rfc3339("1969-12-31T23:00:00-01:00"), Ok(0));
    assert_eq!(parse_rfc3339("2026-03-04T10:30:00Z"), Ok(1_772_620_200_000));
    assert_eq!(parse_rfc3339("2024-02-29"), Ok(days_from_civil(2024, 2, 29) * 86_400_000));
    for bad in [
        "2027-1-01",
        "2027-13-01",
        "2027-02-29",
        "2100-02-29",
        "2027-04-31",
        "2027-00-10",
        "2027-01-00",
        "2027-01-01T",
        "2027-01-01T24:00:00Z",
        "2027-01-01T10:60:00Z",
        "2027-01-01T10:00:60Z",
        "2027-01-01T10:00:00",
        "2027-01-01T10:00Z",
        "2027-01-01 10:00:00Z",
        "2027-01-01T10:00:00.Z",
        "2027-01-01T10:00:00+2:00",
        "2027-01-01T10:00:00+24:00",
        "2027-01-01Z",
        "２０２７-01-01",
        "",
        "tomorrow",
    ] {
        assert!(parse_rfc3339(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_rfc3339("2027-02-29").unwrap_err(), "day 29 does not exist in 2027-02");
}

#[test]
fn clock_fields() {
    // 2026-03-04T10:30:00Z was a Wednesday.
    assert_eq!(clock(1_772_620_200_000), (10, 30, 3));
    assert_eq!(clock(0), (0, 0, 4)); // Thursday
    assert_eq!(clock(days_from_civil(2026, 3, 8) as u64 * 86_400_000 + 86_399_999), (23, 59, 7));
    assert_eq!(clock(days_from_civil(2026, 3, 9) as u64 * 86_400_000), (0, 0, 1));
}

#[test]
fn now_comparisons() {
    // now = 2026-03-04T10:30:00Z
    assert_eq!(t("now < '2027-01-01'"), True);
    assert_eq!(t("now > '2027-01-01'"), False);
    assert_eq!(t("now >= '2026-03-04T10:30:00Z'"), True);
    assert_eq!(t("now > '2026-03-04T10:30:00Z'"), False);
    assert_eq!(t("now == '2026-03-04T10:30:00Z'"), True);
    assert_eq!(t("now != '2026-03-04T10:30:00.001Z'"), True);
    assert_eq!(t("now < '2026-03-04T11:30:00+01:00'"), False);
    assert_eq!(t("'2026-01-01' <= now"), True, "a date on the left");
    assert_eq!(t("now > 1772620199"), True);
    assert_eq!(t("now >= 1772620200"), True);
    assert_eq!(t("now > 1772620200"), False);
    assert_eq!(t("now < 1772620200.5"), True);
    assert_eq!(t("now < identity.exp"), True, "JWT-style exp in Unix seconds");
    assert_eq!(t("now < identity.tenant"), False, "a string fact is never a time");
    assert_eq!(t("now.hour == 10 and now.minute == 30 and now.weekday == 3"), True);
    assert_eq!(t("now.weekday in [1, 2, 3, 4, 5] and now.hour >= 9 and now.hour < 17"), True);
    let mut f = Facts::new();
    f.now_ms += 8 * 3_600_000; // 18:30
    assert_eq!(eval_in("now.hour >= 9 and now.hour < 17", &f), False);
    f.now_ms += 3 * 86_400_000; // Saturday
    assert_eq!(eval_in("now.weekday in [6, 7]", &f), True);
    f.now_ms = u64::MAX;
    assert_eq!(eval_in("now > '9999-12-31T23:59:59Z'", &f), True);
}
