//! When a grading started, by the wall clock, as a line's `started_at`: RFC 3339 in UTC to the
//! microsecond (`2026-01-02T03:04:05.678901Z`), cheaply, as every line has one.
//!
//! The wall clock is read once per process: a grading's start is that reading plus the
//! monotonic time since (its first poll's `Instant`, which the grading reads anyway), so a
//! line costs no clock read, and the date and time of a second is formatted once per thread
//! per second. (Reading the wall clock and formatting it with a general formatter took about
//! 0.4 µs a line here, a sixth of a cheap grading.)

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The wall clock and the monotonic clock, read together once.
static BASE: OnceLock<(Instant, SystemTime)> = OnceLock::new();

thread_local! {
    /// The second last formatted on this thread (since the Unix epoch), and its
    /// `YYYY-MM-DDTHH:MM:SS.` text.
    static SECOND: Cell<(u64, [u8; 20])> = const { Cell::new((u64::MAX, [0; 20])) };
}

/// The wall-clock time of `instant`, by the process's one reading of both clocks.
pub(super) fn wall_time(instant: Instant) -> SystemTime {
    let (base_instant, base_wall) = *BASE.get_or_init(|| (Instant::now(), SystemTime::now()));
    if instant >= base_instant {
        base_wall + instant.duration_since(base_instant)
    } else {
        base_wall - base_instant.duration_since(instant)
    }
}

/// `time` in RFC 3339, UTC, to the microsecond; `None` before 1970 or after 9999.
pub(super) fn rfc3339_micros(time: SystemTime) -> Option<String> {
    let since = time.duration_since(UNIX_EPOCH).ok()?;
    let second = since.as_secs();
    let prefix = match SECOND.get() {
        (cached, prefix) if cached == second => prefix,
        _ => {
            let prefix = second_text(second)?;
            SECOND.set((second, prefix));
            prefix
        }
    };
    let mut text = [0u8; 27];
    text[..20].copy_from_slice(&prefix);
    digits(&mut text[20..26], u64::from(since.subsec_micros()));
    text[26] = b'Z';
    String::from_utf8(text.to_vec()).ok()
}

/// `value`'s last decimal digits, as many as `out` holds, zero-padded.
fn digits(out: &mut [u8], mut value: u64) {
    for byte in out.iter_mut().rev() {
        *byte = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// `YYYY-MM-DDTHH:MM:SS.` of the second `second` after the Unix epoch (the civil date by
/// Howard Hinnant's `civil_from_days`).
fn second_text(second: u64) -> Option<[u8; 20]> {
    let days = i64::try_from(second / 86_400).ok()?;
    let of_day = second % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    let year = u64::try_from(year).ok().filter(|year| *year <= 9999)?;
    let mut text = *b"0000-00-00T00:00:00.";
    digits(&mut text[0..4], year);
    digits(&mut text[5..7], u64::try_from(month).ok()?);
    digits(&mut text[8..10], u64::try_from(day).ok()?);
    digits(&mut text[11..13], of_day / 3_600);
    digits(&mut text[14..16], of_day % 3_600 / 60);
    digits(&mut text[17..19], of_day % 60);
    Some(text)
}

/// The wall-clock start of a grading that began at `started`, as a line's `started_at`.
pub(super) fn started_at(started: Instant) -> Option<String> {
    rfc3339_micros(wall_time(started))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: u64, micros: u64) -> Option<String> {
        rfc3339_micros(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(micros))
    }

    #[test]
    fn times_are_written_in_rfc_3339_utc_to_the_microsecond() {
        assert_eq!(at(0, 0).as_deref(), Some("1970-01-01T00:00:00.000000Z"));
        assert_eq!(
            at(951_782_400, 1).as_deref(),
            Some("2000-02-29T00:00:00.000001Z")
        );
        assert_eq!(
            at(1_709_210_096, 789_012).as_deref(),
            Some("2024-02-29T12:34:56.789012Z")
        );
        assert_eq!(
            at(4_107_542_399, 999_999).as_deref(),
            Some("2100-02-28T23:59:59.999999Z")
        );
        assert_eq!(
            at(253_402_300_799, 0).as_deref(),
            Some("9999-12-31T23:59:59.000000Z")
        );
        // The same second again (from the cache), and one past the format's range.
        assert_eq!(
            at(1_709_210_096, 5).as_deref(),
            Some("2024-02-29T12:34:56.000005Z")
        );
        assert_eq!(at(253_402_300_800, 0), None);
        assert_eq!(rfc3339_micros(UNIX_EPOCH - Duration::from_secs(1)), None);
    }

    #[test]
    fn every_day_of_four_centuries_follows_the_one_before() {
        // Day by day from 1970 to 2370, the date moves on by exactly one day each time.
        let mut last: Option<(u64, u64, u64)> = None;
        for day in 0..146_097 {
            let text = second_text(day * 86_400).expect("in range");
            let text = std::str::from_utf8(&text).expect("ASCII");
            let number =
                |range: std::ops::Range<usize>| -> u64 { text[range].parse().expect("digits") };
            let date = (number(0..4), number(5..7), number(8..10));
            if let Some((year, month, day_of_month)) = last {
                let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
                let length = match month {
                    2 if leap => 29,
                    2 => 28,
                    4 | 6 | 9 | 11 => 30,
                    _ => 31,
                };
                let expected = if day_of_month < length {
                    (year, month, day_of_month + 1)
                } else if month < 12 {
                    (year, month + 1, 1)
                } else {
                    (year + 1, 1, 1)
                };
                assert_eq!(date, expected, "{text}");
            } else {
                assert_eq!(date, (1970, 1, 1));
            }
            last = Some(date);
        }
    }

    #[test]
    fn a_start_is_the_wall_clock_by_the_monotonic_one() {
        let before = SystemTime::now();
        let started = Instant::now();
        let wall = wall_time(started);
        let after = SystemTime::now();
        // Within the clocks' drift since the process's one reading: well under a second here.
        let slack = Duration::from_secs(1);
        assert!(wall + slack >= before && wall <= after + slack);
        let text = started_at(started).expect("a time");
        assert_eq!(text.len(), 27);
        assert!(text.ends_with('Z') && text.as_bytes()[10] == b'T', "{text}");
    }
}
