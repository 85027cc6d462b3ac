//! How a lane's lines go out: written out as JSON as each ends ([`Appending`]), then at the
//! end of the poll appended to the run's local file in one write under its lock, or, when
//! another worker holds the file (or there is none), handed to the awaiting task as one
//! buffer.

use std::panic::AssertUnwindSafe;

use super::{Event, Json, panic_message};
use crate::output::SharedFile;

thread_local! {
    /// Where a lane writes out the lines that end in one poll, to append them to the file in
    /// one `write`; kept between polls for the worker's next.
    static APPEND: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The lines of one poll of a lane, written out as they end, to go out together at its end:
/// appended to the run's local file in one write, or handed to the awaiting task as one
/// buffer.
pub(super) struct Appending<'a> {
    file: Option<&'a SharedFile>,
    /// For a file, taken from [`APPEND`] for the poll (a poll nested in this one finds it
    /// empty, and uses its own), and put back after ([`keep_for_next_poll`]).
    bytes: Vec<u8>,
}

/// The most of a buffer a worker keeps between polls: a poll's lines are a few tens of
/// kilobytes; a larger buffer is let go rather than kept on the thread after the run.
const KEPT_BUFFER: usize = 128 << 10;

/// Puts a buffer back in [`APPEND`] for the worker's next poll, unless it is larger than
/// [`KEPT_BUFFER`] (or the thread is ending).
pub(super) fn keep_for_next_poll(buffer: Option<Vec<u8>>) {
    if let Some(mut buffer) = buffer.filter(|buffer| buffer.capacity() <= KEPT_BUFFER) {
        buffer.clear();
        let _ = APPEND.try_with(|kept| kept.set(buffer));
    }
}

/// The most of a lane's lines it holds for its next poll while another worker is writing the
/// file (see [`Appending::finish`]); more go to the awaiting task.
const HELD_MOST: usize = 1 << 20;

/// What became of the lines of a poll ([`Appending::finish`]).
pub(super) enum Sent {
    /// Sent (to the file, or to the awaiting task): the buffer to keep for the next poll, if
    /// it was not sent itself.
    Out(Option<Vec<u8>>),
    /// Not sent: the file was busy, and the lane holds them (their bytes here, their events
    /// still in its list) to append with the lines of its next poll.
    Held(Vec<u8>),
}

impl<'a> Appending<'a> {
    /// The lines of a poll, after `held`, the bytes of lines an earlier poll held back (see
    /// [`Sent::Held`]).
    pub(super) fn new(file: Option<&'a SharedFile>, held: Vec<u8>) -> Self {
        let bytes = match file {
            Some(_) if held.is_empty() => {
                APPEND.try_with(std::cell::Cell::take).unwrap_or_default()
            }
            _ => held,
        };
        Appending { file, bytes }
    }

    /// Writes out the line of an `event` that is one: it becomes [`Json::InFile`] (until
    /// [`finish`](Self::finish) says otherwise) and the line is dropped; a line that cannot
    /// be written out keeps its error. (Writing runs none of the grading's code; should it
    /// panic all the same, that is this line's error, not its lane mates'.)
    pub(super) fn write_out(&mut self, event: &mut Event) {
        let Event::Line { line, .. } = event else {
            return;
        };
        let Json::Line(json) = &line.json else {
            return;
        };
        let before = self.bytes.len();
        let written = std::panic::catch_unwind(AssertUnwindSafe(|| {
            crate::line::write_line(&mut self.bytes, json).map_err(|error| error.to_string())
        }))
        .unwrap_or_else(|panic| Err(panic_message(&panic)));
        match written {
            Ok(()) => {
                self.bytes.push(b'\n');
                line.json = Json::InFile;
            }
            Err(message) => {
                self.bytes.truncate(before);
                line.json = Json::Written(Err((json.id.clone(), message)));
            }
        }
    }

    /// Sends the lines written out: appended to the file in one write (if it fails, each of
    /// them in `ended`, the events of this poll, becomes [`Json::Unwritten`]), or as one
    /// buffer on the first of them, the others marked [`Json::WithOthers`]. So that a worker
    /// never waits on another's write (a slow file system would stall the runtime), a file
    /// whose lock is taken does not get them now: when the lane is polled again soon (`hold`)
    /// it keeps them to append with its next poll's lines, in one larger write (up to
    /// [`HELD_MOST`] bytes); otherwise they go through the awaiting task.
    pub(super) fn finish(mut self, ended: &mut [Event], hold: bool) -> Sent {
        let written = ended.iter_mut().filter_map(|event| match event {
            Event::Line { line, .. } if matches!(line.json, Json::InFile) => Some(line),
            _ => None,
        });
        if self.bytes.is_empty() {
            return Sent::Out(Some(self.bytes));
        }
        if let Some(file) = self.file {
            match file.try_append(&self.bytes) {
                Some(true) => return Sent::Out(Some(self.bytes)),
                Some(false) => {
                    written.for_each(|line| line.json = Json::Unwritten);
                    return Sent::Out(Some(self.bytes));
                }
                None if hold && self.bytes.len() < HELD_MOST => return Sent::Held(self.bytes),
                None => {}
            }
        }
        let mut bytes = Some(std::mem::take(&mut self.bytes));
        for line in written {
            line.json = match bytes.take() {
                Some(bytes) => Json::Written(Ok(bytes)),
                None => Json::WithOthers,
            };
        }
        Sent::Out(None)
    }
}
