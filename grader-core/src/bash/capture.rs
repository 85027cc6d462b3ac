//! Bounded capture of one output stream: the first and last bytes within a budget, and a count
//! of what was dropped between them.

use tokio::io::{AsyncRead, AsyncReadExt};

/// How many bytes one read asks for.
const READ_CHUNK: usize = 64 * 1024;

/// The bytes a stream produced, bounded: up to half the budget from its start (the head) and
/// the rest from its end (the tail). Memory never exceeds the budget plus one read buffer.
#[derive(Debug)]
pub(super) struct Capture {
    head_limit: usize,
    head: Vec<u8>,
    tail: Ring,
    total: u64,
}

/// The last bytes written, in a buffer allocated as it fills and never beyond its capacity.
#[derive(Debug)]
struct Ring {
    capacity: usize,
    buf: Vec<u8>,
    /// Where the next byte goes once `buf` is full; the oldest byte is there.
    start: usize,
}

impl Ring {
    fn push(&mut self, mut data: &[u8]) {
        if self.capacity == 0 {
            return;
        }
        if data.len() >= self.capacity {
            data = &data[data.len() - self.capacity..];
            self.buf.clear();
            self.buf.extend_from_slice(data);
            self.start = 0;
            return;
        }
        let room = self.capacity - self.buf.len();
        if room > 0 {
            let (fill, rest) = data.split_at(room.min(data.len()));
            self.buf.extend_from_slice(fill);
            data = rest;
        }
        while !data.is_empty() {
            let n = data.len().min(self.capacity - self.start);
            self.buf[self.start..self.start + n].copy_from_slice(&data[..n]);
            self.start = (self.start + n) % self.capacity;
            data = &data[n..];
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.buf.len()
    }

    /// The bytes, oldest first.
    fn into_vec(mut self) -> Vec<u8> {
        self.buf.rotate_left(self.start);
        self.buf
    }
}

impl Capture {
    /// An empty capture keeping at most `limit` bytes.
    pub(super) fn new(limit: usize) -> Self {
        let head_limit = limit - limit / 2;
        Capture {
            head_limit,
            head: Vec::new(),
            tail: Ring {
                capacity: limit / 2,
                buf: Vec::new(),
                start: 0,
            },
            total: 0,
        }
    }

    /// Records the next bytes of the stream.
    pub(super) fn push(&mut self, data: &[u8]) {
        self.total = self
            .total
            .saturating_add(u64::try_from(data.len()).unwrap_or(u64::MAX));
        let room = self.head_limit - self.head.len();
        let (to_head, rest) = data.split_at(room.min(data.len()));
        self.head.extend_from_slice(to_head);
        self.tail.push(rest);
    }

    /// How many bytes the stream produced that are not kept.
    #[cfg(test)]
    fn dropped(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    /// The kept bytes as text (invalid UTF-8 becomes U+FFFD), and how many bytes of the stream
    /// the text leaves out. When bytes were dropped, a marker line saying how many stands
    /// between the head and the tail, and a character cut in two at either edge is left out
    /// (and counted) rather than shown as U+FFFD.
    ///
    /// The text itself stays within the budget (the marker line aside): each invalid byte
    /// becomes a 3-byte U+FFFD, so a stream of invalid bytes is cut further, and what is cut
    /// is counted as dropped.
    pub(super) fn finish(self) -> (String, u64) {
        let tail_limit = self.tail.capacity;
        let tail = self.tail.into_vec();
        let kept = (self.head.len() + tail.len()) as u64;
        let (head_text, tail_text, covered) = if self.total == kept {
            let mut all = self.head;
            all.extend_from_slice(&tail);
            let text = String::from_utf8_lossy(&all);
            if text.len() <= self.head_limit + tail_limit {
                return (text.into_owned(), 0);
            }
            let (head_text, head_used) = lossy_prefix(&all, self.head_limit);
            let (tail_text, tail_used) = lossy_suffix(&all[head_used..], tail_limit);
            (head_text, tail_text, head_used + tail_used)
        } else {
            let (head_text, head_used) = lossy_prefix(trim_cut_end(&self.head), self.head_limit);
            let (tail_text, tail_used) = lossy_suffix(trim_cut_start(&tail), tail_limit);
            (head_text, tail_text, head_used + tail_used)
        };
        let dropped = self.total - covered as u64;
        (
            format!("{head_text}\n[... {dropped} bytes dropped ...]\n{tail_text}"),
            dropped,
        )
    }

    /// Reads `pipe` to its end (or its first error) into this capture.
    pub(super) async fn fill<R: AsyncRead + Unpin>(&mut self, pipe: Option<R>) {
        let Some(mut pipe) = pipe else { return };
        let mut buf = vec![0_u8; READ_CHUNK];
        loop {
            match pipe.read(&mut buf).await {
                Ok(0) => return,
                Ok(n) => self.push(&buf[..n]),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    tracing::debug!(%error, "reading a command's output failed; keeping what was read");
                    return;
                }
            }
        }
    }
}

/// The longest start of `bytes` whose text (invalid UTF-8 as U+FFFD) fits in `budget` bytes:
/// that text, and how many bytes of `bytes` it stands for.
fn lossy_prefix(bytes: &[u8], budget: usize) -> (String, usize) {
    let mut text = String::new();
    let mut used = 0;
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        let room = budget - text.len();
        if valid.len() > room {
            let cut = floor_char_boundary(valid, room);
            text.push_str(&valid[..cut]);
            return (text, used + cut);
        }
        text.push_str(valid);
        used += valid.len();
        if chunk.invalid().is_empty() {
            continue;
        }
        if budget - text.len() < REPLACEMENT_LEN {
            break;
        }
        text.push(char::REPLACEMENT_CHARACTER);
        used += chunk.invalid().len();
    }
    (text, used)
}

/// The longest end of `bytes` whose text (invalid UTF-8 as U+FFFD) fits in `budget` bytes:
/// that text, and how many bytes of `bytes` it stands for.
fn lossy_suffix(bytes: &[u8], budget: usize) -> (String, usize) {
    let chunks: Vec<_> = bytes.utf8_chunks().collect();
    // The pieces of the text, last first.
    let mut pieces: Vec<&str> = Vec::new();
    let mut len = 0;
    let mut used = 0;
    for chunk in chunks.iter().rev() {
        if !chunk.invalid().is_empty() {
            if budget - len < REPLACEMENT_LEN {
                break;
            }
            pieces.push("\u{FFFD}");
            len += REPLACEMENT_LEN;
            used += chunk.invalid().len();
        }
        let valid = chunk.valid();
        let room = budget - len;
        if valid.len() > room {
            let mut start = valid.len() - room;
            while !valid.is_char_boundary(start) {
                start += 1;
            }
            pieces.push(&valid[start..]);
            used += valid.len() - start;
            break;
        }
        pieces.push(valid);
        len += valid.len();
        used += valid.len();
    }
    pieces.reverse();
    (pieces.concat(), used)
}

/// How many bytes U+FFFD takes in UTF-8.
const REPLACEMENT_LEN: usize = 3;

/// The largest char boundary of `text` at or below `index`.
fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// `bytes` without a trailing UTF-8 sequence that was cut short.
fn trim_cut_end(bytes: &[u8]) -> &[u8] {
    // The start of the last character is at most 3 bytes from the end.
    for back in 1..=bytes.len().min(4) {
        let i = bytes.len() - back;
        let byte = bytes[i];
        if byte & 0b1100_0000 == 0b1000_0000 {
            continue; // a continuation byte: keep looking for the lead
        }
        let needed = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if needed > back { &bytes[..i] } else { bytes };
    }
    bytes
}

/// `bytes` without the continuation bytes of a character whose start was cut off.
fn trim_cut_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|&&b| b & 0b1100_0000 == 0b1000_0000)
        .count();
    &bytes[skip..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(limit: usize, chunks: &[&[u8]]) -> Capture {
        let mut cap = Capture::new(limit);
        for chunk in chunks {
            cap.push(chunk);
        }
        cap
    }

    fn text_of(cap: Capture) -> (String, u64) {
        cap.finish()
    }

    #[test]
    fn within_budget_everything_is_kept_in_order() {
        let cap = capture(10, &[b"abc", b"defg", b"hij"]);
        assert_eq!(text_of(cap), ("abcdefghij".into(), 0));
    }

    #[test]
    fn over_budget_keeps_head_and_tail_and_counts_the_rest() {
        let cap = capture(6, &[b"abcd", b"efgh", b"ij", b"k", b"lmnop"]);
        assert_eq!(
            text_of(cap),
            ("abc\n[... 10 bytes dropped ...]\nnop".into(), 10)
        );
    }

    #[test]
    fn one_huge_chunk_keeps_its_own_head_and_tail() {
        let data: Vec<u8> = (0..=255).collect();
        let mut cap = Capture::new(5);
        cap.push(&data);
        assert_eq!(cap.head, [0, 1, 2]);
        assert_eq!(cap.tail.buf, [254, 255]);
        assert_eq!(cap.dropped(), 251);
    }

    #[test]
    fn a_zero_budget_keeps_nothing() {
        let cap = capture(0, &[b"abc"]);
        assert_eq!(text_of(cap), ("\n[... 3 bytes dropped ...]\n".into(), 3));
    }

    #[test]
    fn a_multibyte_character_split_between_head_and_tail_is_whole() {
        let cap = capture(4, &["é".as_bytes(), "é".as_bytes()]);
        assert_eq!(text_of(cap), ("éé".into(), 0));
    }

    #[test]
    fn characters_cut_at_the_edges_are_left_out() {
        // The head is "aé" (3 bytes); the tail is the last two bytes of "€" and "b".
        let text = "aé-xyz-€b";
        let cap = capture(6, &[text.as_bytes()]);
        assert_eq!(cap.dropped(), 6);
        assert_eq!(text_of(cap), ("aé\n[... 8 bytes dropped ...]\nb".into(), 8));
        let cap = capture(4, &["ab€".as_bytes()]);
        // head "ab" is whole; tail is the last 2 bytes of "€": both continuation bytes.
        assert_eq!(text_of(cap), ("ab\n[... 3 bytes dropped ...]\n".into(), 3));
        let cap = capture(6, &["a€bcdef".as_bytes()]);
        // head "a" + 2 of the 3 bytes of "€": the cut character is left out.
        assert_eq!(
            text_of(cap),
            ("a\n[... 5 bytes dropped ...]\ndef".into(), 5)
        );
    }

    #[test]
    fn the_tail_wraps_around_in_any_chunking() {
        let data: Vec<u8> = (0..200_u8).collect();
        for chunk in 1..=23 {
            let mut cap = Capture::new(20);
            for piece in data.chunks(chunk) {
                cap.push(piece);
            }
            assert_eq!(cap.head, (0..10).collect::<Vec<u8>>());
            assert_eq!(
                cap.tail.into_vec(),
                (190..200).collect::<Vec<u8>>(),
                "chunks of {chunk}"
            );
        }
    }

    #[test]
    fn invalid_bytes_do_not_grow_the_text_past_the_budget() {
        // Each 0xFF becomes a 3-byte U+FFFD: within the budget as bytes, over it as text.
        let cap = capture(12, &[&[0xFF; 10]]);
        let (text, dropped) = text_of(cap);
        assert_eq!(
            text,
            "\u{FFFD}\u{FFFD}\n[... 6 bytes dropped ...]\n\u{FFFD}\u{FFFD}"
        );
        assert_eq!(dropped, 6);
        // Far over the budget: the kept head and tail are cut down to it.
        let mut cap = Capture::new(1000);
        for _ in 0..1000 {
            cap.push(&[0xFF; 1000]);
        }
        let (text, dropped) = cap.finish();
        let marker = format!("\n[... {dropped} bytes dropped ...]\n");
        assert!(text.len() <= 1000 + marker.len(), "{} bytes", text.len());
        assert_eq!(dropped, 1_000_000 - 2 * 166);
        // Mixed valid and invalid text keeps whole characters on both sides.
        let cap = capture(9, &["é\u{FF}".as_bytes(), b"\xFFab\xFFcd"]);
        assert_eq!(
            text_of(cap),
            ("é\u{FF}\n[... 4 bytes dropped ...]\ncd".into(), 4)
        );
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let cap = capture(100, &[b"a\xffb"]);
        assert_eq!(text_of(cap), ("a\u{FFFD}b".into(), 0));
    }
}
