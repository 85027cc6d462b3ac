//! Edit distances 64 cells at a time: Myers' bit-vector Levenshtein distance (Myers 1999, in
//! blocks of 64 rows, with Ukkonen's band for similar texts) and the bit-parallel longest
//! common subsequence (Allison and Dix 1986, Hyyrö 2004), the algorithms rapidfuzz uses. Each
//! costs at most `ceil(len(a) / 64) × len(b)` word operations and memory for `len(a)` bits per
//! distinct item of `a`.

use std::collections::HashMap;
use std::hash::Hash;

use foldhash::fast::RandomState;

/// For each distinct item of the pattern, the bits of the rows where it occurs.
struct Pattern<T> {
    blocks: usize,
    rows: usize,
    positions: HashMap<T, Vec<u64>, RandomState>,
    none: Vec<u64>,
}

impl<T: Hash + Eq + Copy> Pattern<T> {
    fn new(pattern: &[T]) -> Self {
        let blocks = pattern.len().div_ceil(64);
        let mut positions: HashMap<T, Vec<u64>, RandomState> =
            HashMap::with_hasher(RandomState::default());
        for (row, &item) in pattern.iter().enumerate() {
            positions.entry(item).or_insert_with(|| vec![0; blocks])[row / 64] |= 1 << (row % 64);
        }
        Self {
            blocks,
            rows: pattern.len(),
            positions,
            none: vec![0; blocks],
        }
    }

    fn bits(&self, item: &T) -> &[u64] {
        self.positions.get(item).map_or(&self.none, Vec::as_slice)
    }
}

/// The pattern's bits for characters: ASCII ones in a table (one row of blocks per byte),
/// others in a map.
struct CharPattern {
    blocks: usize,
    rows: usize,
    ascii: Vec<u64>,
    other: HashMap<char, Vec<u64>, RandomState>,
    none: Vec<u64>,
}

impl CharPattern {
    fn new(pattern: &[char]) -> Self {
        let blocks = pattern.len().div_ceil(64);
        let mut ascii = vec![0u64; 128 * blocks];
        let mut other: HashMap<char, Vec<u64>, RandomState> =
            HashMap::with_hasher(RandomState::default());
        for (row, &c) in pattern.iter().enumerate() {
            let bit = 1u64 << (row % 64);
            if c.is_ascii() {
                ascii[c as usize * blocks + row / 64] |= bit;
            } else {
                other.entry(c).or_insert_with(|| vec![0; blocks])[row / 64] |= bit;
            }
        }
        Self {
            blocks,
            rows: pattern.len(),
            ascii,
            other,
            none: vec![0; blocks],
        }
    }

    fn bits(&self, c: char) -> &[u64] {
        if c.is_ascii() {
            let start = c as usize * self.blocks;
            &self.ascii[start..start + self.blocks]
        } else {
            self.other.get(&c).map_or(&self.none, Vec::as_slice)
        }
    }
}

/// One block of one column of Myers' algorithm (Hyyrö's formulation): the block's vertical
/// deltas `pv`/`mv` move one column on, given the pattern's bits for the column's item and the
/// horizontal delta entering from the block above (`cp`/`cm`, +1 or -1); the delta leaving at
/// the row `high` goes to the block below.
#[inline(always)]
fn advance(pv: &mut u64, mv: &mut u64, equal: u64, cp: &mut u64, cm: &mut u64, high: u64) {
    let eq = equal | *cm;
    let xv = equal | *mv;
    let xh = ((eq & *pv).wrapping_add(*pv) ^ *pv) | eq;
    let ph = *mv | !(xh | *pv);
    let mh = *pv & xh;
    let out_plus = u64::from(ph & high != 0);
    let out_minus = u64::from(mh & high != 0);
    let ph = (ph << 1) | *cp;
    let mh = (mh << 1) | *cm;
    *pv = mh | !(xv | ph);
    *mv = ph & xv;
    *cp = out_plus;
    *cm = out_minus;
}

/// The Levenshtein distance between two strings of characters (`pattern` no longer than
/// `text`), as [`levenshtein`] computes it, faster: ASCII is looked up in a table, two columns
/// are computed at once along a wavefront (the second column's block `b - 1` beside the first
/// column's block `b`, so that their chains of carries run side by side), and for long
/// patterns a narrow band around the diagonal is tried first (Ukkonen): only the blocks whose
/// rows can lie on a path of cost at most `k` are computed, which finds the distance of two
/// similar texts at a fraction of the table's cost, and says "more than `k`" otherwise.
pub(super) fn levenshtein_chars(pattern: &[char], text: &[char]) -> usize {
    if pattern.is_empty() {
        return text.len();
    }
    let bits = CharPattern::new(pattern);
    let skew = text.len() - pattern.len();
    for band in [256, 2048, 8192] {
        let k = skew + band;
        // Worth it only where the band is under a quarter of the pattern: a band too narrow
        // costs that much more than the whole table.
        if (k + 1).div_ceil(64) * 4 < bits.blocks
            && let Some(distance) = banded(&bits, text, k)
        {
            return distance;
        }
    }
    full(&bits, text)
}

/// Every block of every column.
fn full(bits: &CharPattern, text: &[char]) -> usize {
    let blocks = bits.blocks;
    let last_bit = 1u64 << ((bits.rows - 1) % 64);
    let top = 1u64 << 63;
    let mut pv = vec![u64::MAX; blocks];
    let mut mv = vec![0u64; blocks];
    let mut score = bits.rows;
    let mut columns = text.chunks_exact(2);
    if blocks >= 2 {
        for pair in &mut columns {
            let (first, second) = (bits.bits(pair[0]), bits.bits(pair[1]));
            let (mut cp1, mut cm1, mut cp2, mut cm2) = (1u64, 0u64, 1u64, 0u64);
            advance(&mut pv[0], &mut mv[0], first[0], &mut cp1, &mut cm1, top);
            for b in 1..blocks - 1 {
                advance(&mut pv[b], &mut mv[b], first[b], &mut cp1, &mut cm1, top);
                advance(
                    &mut pv[b - 1],
                    &mut mv[b - 1],
                    second[b - 1],
                    &mut cp2,
                    &mut cm2,
                    top,
                );
            }
            let last = blocks - 1;
            advance(
                &mut pv[last],
                &mut mv[last],
                first[last],
                &mut cp1,
                &mut cm1,
                last_bit,
            );
            score = score + usize::from(cp1 == 1) - usize::from(cm1 == 1);
            advance(
                &mut pv[last - 1],
                &mut mv[last - 1],
                second[last - 1],
                &mut cp2,
                &mut cm2,
                top,
            );
            advance(
                &mut pv[last],
                &mut mv[last],
                second[last],
                &mut cp2,
                &mut cm2,
                last_bit,
            );
            score = score + usize::from(cp2 == 1) - usize::from(cm2 == 1);
        }
    }
    let rest: &[char] = if blocks >= 2 {
        columns.remainder()
    } else {
        text
    };
    for &c in rest {
        let equal = bits.bits(c);
        let (mut cp, mut cm) = (1u64, 0u64);
        for b in 0..blocks {
            let high = if b + 1 == blocks { last_bit } else { top };
            advance(&mut pv[b], &mut mv[b], equal[b], &mut cp, &mut cm, high);
        }
        score = score + usize::from(cp == 1) - usize::from(cm == 1);
    }
    score
}

/// The distance where it is at most `k` (`k ≥ len(text) - len(pattern)`), `None` otherwise.
///
/// A path of cost at most `k` through row `i` and column `j` has `j - i` between
/// `-h` and `skew + h`, `h = (k - skew) / 2`: only the blocks holding such rows are computed.
/// A block entering the band at its bottom starts from an upper bound (its rows one more than
/// the row above, as in column 0), and the rows above a block that left the band at the top
/// count as growing by one a column: both can only overestimate cells outside the band, so a
/// result of at most `k` is exact.
fn banded(bits: &CharPattern, text: &[char], k: usize) -> Option<usize> {
    let (m, n) = (bits.rows, text.len());
    let skew = n - m;
    let h = (k - skew) / 2;
    let blocks = bits.blocks;
    let last = blocks - 1;
    let last_bit = 1u64 << ((m - 1) % 64);
    let rows_in = |b: usize| if b == last { (m - 1) % 64 + 1 } else { 64 };
    // The band's bit rows at column `j` (1-based): `j - 1 - skew - h ..= j - 1 + h`.
    let block_range = |j: usize| {
        let lo = (j - 1).saturating_sub(skew + h) / 64;
        let hi = ((j - 1 + h).min(m - 1)) / 64;
        (lo, hi)
    };
    let mut pv = vec![u64::MAX; blocks];
    let mut mv = vec![0u64; blocks];
    // The value of each block's bottom row, for the blocks that have entered.
    let mut scores = vec![0usize; blocks];
    let (mut first, mut active_last) = block_range(1);
    for (b, score) in scores.iter_mut().enumerate().take(active_last + 1) {
        *score = (b * 64 + rows_in(b)).min(m);
    }
    for (index, &c) in text.iter().enumerate() {
        let (lo, hi) = block_range(index + 1);
        while active_last < hi {
            active_last += 1;
            let b = active_last;
            pv[b] = u64::MAX;
            mv[b] = 0;
            scores[b] = scores[b - 1] + rows_in(b);
        }
        first = first.max(lo);
        let equal = bits.bits(c);
        let (mut cp, mut cm) = (1u64, 0u64);
        for b in first..=active_last {
            let high = if b == last { last_bit } else { 1u64 << 63 };
            advance(&mut pv[b], &mut mv[b], equal[b], &mut cp, &mut cm, high);
            scores[b] = scores[b] + usize::from(cp == 1) - usize::from(cm == 1);
        }
    }
    let distance = scores[last];
    (distance <= k).then_some(distance)
}

/// The length of the longest common subsequence of `pattern` and `text`.
pub(super) fn lcs<T: Hash + Eq + Copy>(pattern: &[T], text: &[T]) -> usize {
    if pattern.is_empty() {
        return 0;
    }
    let pattern_bits = Pattern::new(pattern);
    let mut v = vec![u64::MAX; pattern_bits.blocks];
    for item in text {
        let matches = pattern_bits.bits(item);
        let mut carry = 0u64;
        for (word, &m) in v.iter_mut().zip(matches) {
            let u = *word & m;
            let (sum, c1) = word.overflowing_add(u);
            let (sum, c2) = sum.overflowing_add(carry);
            carry = u64::from(c1 || c2);
            *word = sum | (*word & !u);
        }
    }
    let mut zeros = 0;
    for (block, word) in v.iter().enumerate() {
        let rows = (pattern_bits.rows - block * 64).min(64);
        let mask = if rows == 64 {
            u64::MAX
        } else {
            (1 << rows) - 1
        };
        zeros += (!word & mask).count_ones() as usize;
    }
    zeros
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The band, against the whole table, on long similar texts (a copy with a few edits) and
    /// on long different ones, whose distances fall on either side of the band.
    #[test]
    fn the_band_agrees_with_the_whole_table() {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            usize::try_from(state % n).unwrap_or(0)
        };
        let alphabet = ['a', 'b', 'c', 'd', 'é', ' '];
        for round in 0..60 {
            let len = 600 + next(4000);
            let a: Vec<char> = (0..len).map(|_| alphabet[next(6)]).collect();
            let mut b = a.clone();
            let edits = match round % 4 {
                0 => next(20),
                1 => next(300),
                2 => 1000 + next(1000),
                _ => next(3000),
            };
            for _ in 0..edits {
                let at = next(b.len().max(1) as u64);
                match next(3) {
                    0 if !b.is_empty() => {
                        b.remove(at.min(b.len() - 1));
                    }
                    1 => b.insert(at.min(b.len()), alphabet[next(6)]),
                    _ if !b.is_empty() => {
                        let i = at.min(b.len() - 1);
                        b[i] = alphabet[next(6)];
                    }
                    _ => {}
                }
            }
            let (short, long) = if a.len() <= b.len() {
                (&a, &b)
            } else {
                (&b, &a)
            };
            let bits = CharPattern::new(short);
            let whole = full(&bits, long);
            assert_eq!(levenshtein_chars(short, long), whole, "round {round}");
            for band in [64, 256, 2048] {
                let k = long.len() - short.len() + band;
                match banded(&bits, long, k) {
                    Some(d) => assert_eq!(d, whole, "round {round}, k {k}"),
                    None => assert!(whole > k, "round {round}: {whole} <= {k}"),
                }
            }
        }
    }

    fn dp_levenshtein(a: &[char], b: &[char]) -> usize {
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, x) in a.iter().enumerate() {
            let mut diagonal = row[0];
            row[0] = i + 1;
            for (j, y) in b.iter().enumerate() {
                let substitute = diagonal + usize::from(x != y);
                diagonal = row[j + 1];
                row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
            }
        }
        row[b.len()]
    }

    fn dp_lcs(a: &[char], b: &[char]) -> usize {
        let mut row = vec![0usize; b.len() + 1];
        for x in a {
            let mut diagonal = 0;
            for (j, y) in b.iter().enumerate() {
                let next = if x == y {
                    diagonal + 1
                } else {
                    row[j + 1].max(row[j])
                };
                diagonal = row[j + 1];
                row[j + 1] = next;
            }
        }
        row[b.len()]
    }

    /// Against the plain tables, on seeded random strings over small alphabets, across block
    /// boundaries (lengths up to 300).
    #[test]
    fn agrees_with_the_tables() {
        let mut state = 0x0123_4567_89AB_CDEF_u64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            usize::try_from(state % n).unwrap_or(0)
        };
        for _ in 0..400 {
            let alphabet = ['a', 'b', 'c', 'é', '😀'];
            let len_a = next(400);
            let len_b = next(400);
            let sigma = 1 + next(5) as u64;
            let a: Vec<char> = (0..len_a).map(|_| alphabet[next(sigma)]).collect();
            let b: Vec<char> = (0..len_b).map(|_| alphabet[next(sigma)]).collect();
            let (short, long) = if a.len() <= b.len() {
                (&a, &b)
            } else {
                (&b, &a)
            };
            assert_eq!(
                levenshtein_chars(short, long),
                dp_levenshtein(&a, &b),
                "{a:?} {b:?}"
            );
            assert_eq!(lcs(&a, &b), dp_lcs(&a, &b), "{a:?} {b:?}");
        }
    }
}
