//! Edit distances 64 cells at a time: Myers' bit-vector Levenshtein distance (Myers 1999, in
//! blocks of 64 rows) and the bit-parallel longest common subsequence (Allison and Dix 1986,
//! Hyyrö 2004), the algorithms rapidfuzz uses. Each costs `ceil(len(a) / 64) × len(b)` word
//! operations and memory for `len(a)` bits per distinct item of `a`.

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

/// The Levenshtein distance between `pattern` and `text`.
pub(super) fn levenshtein<T: Hash + Eq + Copy>(pattern: &[T], text: &[T]) -> usize {
    if pattern.is_empty() {
        return text.len();
    }
    let pattern_bits = Pattern::new(pattern);
    let blocks = pattern_bits.blocks;
    let last_bit = 1u64 << ((pattern_bits.rows - 1) % 64);
    let mut vectors = vec![(u64::MAX, 0u64); blocks];
    let mut score = pattern_bits.rows;
    for item in text {
        let equal = pattern_bits.bits(item);
        // The top row grows by one a column: a horizontal delta of +1 enters the first block.
        let (mut carry_plus, mut carry_minus) = (1u64, 0u64);
        let last = blocks - 1;
        for (block, ((pv, mv), &eq)) in vectors.iter_mut().zip(equal).enumerate() {
            let eq = eq | carry_minus;
            let xv = equal[block] | *mv;
            let xh = ((eq & *pv).wrapping_add(*pv) ^ *pv) | eq;
            let ph = *mv | !(xh | *pv);
            let mh = *pv & xh;
            let high = if block == last { last_bit } else { 1 << 63 };
            let (out_plus, out_minus) = (u64::from(ph & high != 0), u64::from(mh & high != 0));
            let ph = (ph << 1) | carry_plus;
            let mh = (mh << 1) | carry_minus;
            *pv = mh | !(xv | ph);
            *mv = ph & xv;
            (carry_plus, carry_minus) = (out_plus, out_minus);
        }
        score = score + usize::from(carry_plus == 1) - usize::from(carry_minus == 1);
    }
    score
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
            let len_a = next(300);
            let len_b = next(300);
            let sigma = 1 + next(5) as u64;
            let a: Vec<char> = (0..len_a).map(|_| alphabet[next(sigma)]).collect();
            let b: Vec<char> = (0..len_b).map(|_| alphabet[next(sigma)]).collect();
            assert_eq!(levenshtein(&a, &b), dp_levenshtein(&a, &b), "{a:?} {b:?}");
            assert_eq!(lcs(&a, &b), dp_lcs(&a, &b), "{a:?} {b:?}");
        }
    }
}
