//! Numbers as Inspect AI's `match(numeric=True)` and `f1` read and write them: its cleanup of
//! currency and formatting characters, its parser (Python's `float()`, then Inspect's
//! `unicode_number_to_float` for digits of other scripts, grouping separators, signs,
//! superscript exponents, vulgar fractions and numeric symbols), and Python's `format(x, ".5g")`, `repr(x)` and `round(x, 2)`.

use crate::text::pychar::{self, digit_value, is_space, numeric_value};

/// Characters Inspect strips around a word before reading it as a number.
const NUMERIC_PUNCTUATION_TRIM: &[char] = &[
    '!', '?', ':', ';', '(', ')', '[', ']', '{', '}', '\'', '"', '`',
];
const MINUS: &[char] = &['-', '\u{2212}', '\u{FE63}', '\u{FF0D}'];
const PLUS: &[char] = &['+', '\u{FF0B}', '\u{FE62}'];
const DECIMAL_SEPARATOR_EXTRAS: &[char] = &['\u{66B}', '\u{FF0E}'];
const GROUP_SEPARATORS: &[char] = &[
    ',', '，', '﹐', '、', '٬', ' ', '\u{a0}', '\u{202f}', '\u{2009}', '\u{2007}', '\u{2008}',
    '\'', '’', 'ʼ', '＇',
];
const SUPERSCRIPT_DIGITS: &[char] = &['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
/// Every character Inspect's Chinese numeral parser reads: numbers containing one are not read
/// here (see the module docs of [`inspect`](super)).
const CHINESE_NUMERALS: &str =
    "零〇○一二三四五六七八九壹贰貳叁參肆伍陆陸柒捌玖两兩幺廿卅卌十拾百佰千仟万萬亿億兆负負正点點";

/// Inspect's `strip_numeric_punctuation`: unescapes `\$`, `\,`, `\£`, `\€`, `\*`, `\_`, removes
/// `$ , £ € * _`, and removes each `.` that is not followed by a decimal digit.
pub(crate) fn strip_numeric_punctuation(s: &str) -> String {
    const ESCAPED: &[char] = &['$', ',', '£', '€', '*', '_'];
    let mut unescaped = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek().filter(|next| ESCAPED.contains(next))
        {
            unescaped.push(next);
            chars.next();
            continue;
        }
        unescaped.push(c);
    }
    let kept: Vec<char> = unescaped.chars().filter(|c| !ESCAPED.contains(c)).collect();
    let mut out = String::with_capacity(unescaped.len());
    for (i, &c) in kept.iter().enumerate() {
        let before_digit = kept
            .get(i + 1)
            .is_some_and(|&next| pychar::decimal_value(next).is_some());
        if c != '.' || before_digit {
            out.push(c);
        }
    }
    out
}

/// Inspect's `_parse_number`: a finite number, or `None`.
pub(crate) fn parse_number(s: &str, trim_punctuation: bool) -> Option<f64> {
    let cleaned = if trim_punctuation {
        s.trim_matches(NUMERIC_PUNCTUATION_TRIM)
    } else {
        s
    };
    pychar::parse_float(cleaned)
        .filter(|x| x.is_finite())
        .or_else(|| unicode_number(cleaned).filter(|x| x.is_finite()))
}

/// Inspect's `normalize_number`: the number written with `format(x, ".5g")`, or the text as it
/// was when it is not a number.
pub(crate) fn normalize_number(s: &str, trim_punctuation: bool) -> String {
    match parse_number(s, trim_punctuation) {
        Some(x) => format_g5(x),
        None => s.to_owned(),
    }
}

/// Inspect's `unicode_number_to_float`, without its reading of Chinese numerals (`None` for a
/// text with one of their characters).
fn unicode_number(s: &str) -> Option<f64> {
    // In ASCII, only these can be part of a number it reads: anything else fails it.
    const ASCII_NUMBER: &[u8] = b"0123456789eE+-.,' \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f";
    if s.is_ascii() && s.bytes().any(|b| !ASCII_NUMBER.contains(&b)) {
        return None;
    }
    let mut text = pychar::strip(s);
    if text.is_empty() || text.chars().any(|c| CHINESE_NUMERALS.contains(c)) {
        return None;
    }
    let mut negative = false;
    text = text.trim_start_matches(is_space);
    while let Some(c) = text.chars().next() {
        if MINUS.contains(&c) || PLUS.contains(&c) {
            negative ^= MINUS.contains(&c);
            text = text[c.len_utf8()..].trim_start_matches(is_space);
        } else {
            break;
        }
    }
    let mut chars: Vec<char> = text.chars().collect();
    if let [only] = chars[..] {
        let value = numeric_value(only)?;
        return Some(if negative { -value } else { value });
    }
    let exponent = split_superscript_exponent(&mut chars)?;
    let mut base = with_fraction(&chars)?;
    if negative {
        base = -base;
    }
    match exponent {
        None => Some(base),
        Some(exponent) if base == 0.0 && exponent < 0.0 => None,
        Some(exponent) => Some(base.powf(exponent)),
    }
}

/// Inspect's `_split_superscript_exponent`: removes a trailing superscript exponent from
/// `chars` and returns it; `Some(None)` when there is none, `None` when it is invalid.
fn split_superscript_exponent(chars: &mut Vec<char>) -> Option<Option<f64>> {
    let ignorable = |c: char| is_space(c) || GROUP_SEPARATORS.contains(&c);
    let Some(end) = chars.iter().rposition(|&c| !ignorable(c)) else {
        return Some(None);
    };
    let mut start = end + 1;
    while start > 0 && SUPERSCRIPT_DIGITS.contains(&chars[start - 1]) {
        start -= 1;
    }
    if start > end {
        return Some(None);
    }
    let mut negative = false;
    if start > 0 && matches!(chars[start - 1], '⁻' | '⁺') {
        negative = chars[start - 1] == '⁻';
        start -= 1;
    }
    let base_len = chars[..start]
        .iter()
        .rposition(|&c| !is_space(c))
        .map_or(0, |i| i + 1);
    if base_len == 0 {
        return Some(None);
    }
    let digits: String = chars[start..=end]
        .iter()
        .filter_map(|&c| digit_value(c).filter(|_| c != '⁻' && c != '⁺'))
        .map(|d| char::from(b'0' + d))
        .collect();
    // Python's `int()` of the digits, then `float ** int`: an exponent too large for a float is
    // an error there.
    let magnitude: f64 = digits.parse().ok().filter(|x: &f64| x.is_finite())?;
    chars.truncate(base_len);
    Some(Some(if negative { -magnitude } else { magnitude }))
}

/// The value of a character that is a fraction between 0 and 1 (`½`, `⅓`): Inspect's
/// `_fraction_char_value`.
fn fraction_value(c: char) -> Option<f64> {
    numeric_value(c).filter(|&value| value > 0.0 && value < 1.0)
}

/// Inspect's `_parse_number_with_optional_vulgar_fraction`: a whole number and one fraction
/// character after it (`2½`), or a number without one.
fn with_fraction(chars: &[char]) -> Option<f64> {
    let mut fractions = chars
        .iter()
        .enumerate()
        .filter_map(|(i, &c)| Some((i, fraction_value(c)?)));
    let Some((at, fraction)) = fractions.next() else {
        return core_number(chars);
    };
    if fractions.next().is_some() {
        return None;
    }
    let tail_ok = chars[at + 1..]
        .iter()
        .all(|&c| is_space(c) || GROUP_SEPARATORS.contains(&c));
    if !tail_ok {
        return None;
    }
    let head = &chars[..at];
    let head_value = if head.iter().all(|&c| is_space(c)) {
        0.0
    } else {
        core_number(head)?
    };
    Some(head_value + fraction)
}

/// Inspect's `_parse_core_number_no_leading_signs` (Chinese numerals aside): digits of any
/// script, or one character with a numeric value.
fn core_number(chars: &[char]) -> Option<f64> {
    let start = chars.iter().position(|&c| !is_space(c))?;
    let end = chars
        .iter()
        .rposition(|&c| !is_space(c))
        .map_or(0, |i| i + 1);
    let chars = &chars[start..end];
    generic_digits(chars).or_else(|| match chars {
        [only] => numeric_value(*only),
        _ => None,
    })
}

/// Inspect's `_parse_generic_unicode_digits` with the digits `unicodedata.digit` knows.
fn generic_digits(chars: &[char]) -> Option<f64> {
    let chars = {
        let start = chars.iter().position(|&c| !is_space(c))?;
        let end = chars
            .iter()
            .rposition(|&c| !is_space(c))
            .map_or(0, |i| i + 1);
        &chars[start..end]
    };
    let last_dot = chars.iter().rposition(|&c| c == '.');
    let last_comma = chars.iter().rposition(|&c| c == ',');
    let decimal = match (last_dot, last_comma) {
        (Some(dot), Some(comma)) => Some(if dot > comma { '.' } else { ',' }),
        (Some(_), None) => Some('.'),
        (None, Some(comma)) => {
            let tail = chars[comma + 1..]
                .iter()
                .filter(|&&c| digit_value(c).is_some())
                .count();
            (1..=3).contains(&tail).then_some(',')
        }
        (None, None) => None,
    };
    let mut out = String::with_capacity(chars.len());
    let (mut seen_decimal, mut seen_exponent) = (false, false);
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        if matches!(c, 'e' | 'E') && !seen_exponent {
            if out.is_empty() {
                return None;
            }
            out.push(c);
            seen_exponent = true;
            if let Some(&sign) = chars.get(i)
                && (PLUS.contains(&sign) || MINUS.contains(&sign))
            {
                out.push(if PLUS.contains(&sign) { '+' } else { '-' });
                i += 1;
            }
        } else if DECIMAL_SEPARATOR_EXTRAS.contains(&c) || decimal == Some(c) {
            if seen_decimal {
                return None;
            }
            out.push('.');
            seen_decimal = true;
        } else if GROUP_SEPARATORS.contains(&c)
            || is_space(c)
            || (decimal.is_some() && matches!(c, ',' | '.'))
        {
        } else if let Some(digit) = digit_value(c) {
            out.push(char::from(b'0' + digit));
        } else {
            return None;
        }
    }
    if out
        .chars()
        .all(|c| matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return None;
    }
    out.parse().ok()
}

/// Python's `format(x, ".5g")`.
pub(crate) fn format_g5(x: f64) -> String {
    const PRECISION: i32 = 5;
    let scientific = format!("{:.*e}", 4, x);
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return scientific;
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..PRECISION).contains(&exponent) {
        let decimals = usize::try_from(PRECISION - 1 - exponent).unwrap_or(0);
        trim_fraction(format!("{x:.decimals$}"))
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            trim_fraction(mantissa.to_owned()),
            exponent.unsigned_abs()
        )
    }
}

/// Removes trailing zeros after a decimal point, and the point if nothing follows it.
fn trim_fraction(mut s: String) -> String {
    if s.contains('.') {
        let kept = s.trim_end_matches('0').trim_end_matches('.').len();
        s.truncate(kept);
    }
    s
}

/// Python's `repr(x)` of a finite float: the shortest digits that read back as `x`, written
/// in fixed notation with at least one decimal when `1e-4 <= |x| < 1e16`, else as `1e+16`.
pub(crate) fn py_repr(x: f64) -> String {
    let shortest = format!("{x:e}");
    let Some((mantissa, exponent)) = shortest.split_once('e') else {
        return shortest;
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..16).contains(&exponent) {
        let fixed = format!("{x}");
        if fixed.contains('.') {
            fixed
        } else {
            fixed + ".0"
        }
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
    }
}

/// Python's `round(x, 2)`: to the nearest hundredth of the exact value, ties to even.
pub(crate) fn round2(x: f64) -> f64 {
    format!("{x:.2}").parse().unwrap_or(x)
}

/// Python's `is_finite_number(s)`: `float(s)` succeeds and is finite.
pub(crate) fn is_finite_number(s: &str) -> bool {
    pychar::parse_float(s).is_some_and(f64::is_finite)
}

/// Python's `s.strip(string.whitespace + string.punctuation)`.
pub(crate) fn strip_punctuation(s: &str) -> &str {
    s.trim_matches(|c: char| {
        matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c') || c.is_ascii_punctuation()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_python() {
        assert_eq!(format_g5(42.0), "42");
        assert_eq!(format_g5(0.0001), "0.0001");
        assert_eq!(format_g5(0.00001), "1e-05");
        assert_eq!(format_g5(123_456.0), "1.2346e+05");
        assert_eq!(format_g5(-0.0), "-0");
        assert_eq!(format_g5(99_999.5), "1e+05");
        assert_eq!(py_repr(1e16), "1e+16");
        assert_eq!(py_repr(1e15), "1000000000000000.0");
        assert_eq!(py_repr(0.00001), "1e-05");
        assert_eq!(py_repr(-2.5), "-2.5");
        assert_eq!(round2(0.125), 0.12);
        assert_eq!(round2(2.0 / 3.0), 0.67);
    }

    #[test]
    fn reads_numbers_as_inspect() {
        assert_eq!(parse_number("(42)", true), Some(42.0));
        assert_eq!(parse_number("(42)", false), None);
        assert_eq!(parse_number("1'000", true), Some(1000.0));
        assert_eq!(parse_number("−3", true), Some(-3.0));
        assert_eq!(parse_number("2³", true), Some(8.0));
        assert_eq!(parse_number("٣.٥", true), Some(3.5));
        assert_eq!(parse_number("nan", true), None);
        assert_eq!(parse_number("1e999", true), None);
        assert_eq!(strip_numeric_punctuation("\\$1,000.50."), "1000.50");
        assert_eq!(parse_number("2½", true), Some(2.5));
        assert_eq!(parse_number("-½", true), Some(-0.5));
        assert_eq!(parse_number("Ⅻ", true), Some(12.0));
        assert_eq!(parse_number("½½", true), None);
        assert_eq!(parse_number("三", true), None);
    }
}
