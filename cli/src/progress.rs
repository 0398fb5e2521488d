//! Progress bars: shown only for long work, only on a terminal, never with `--quiet`.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Work smaller than this finishes too fast for a bar to help.
pub const THRESHOLD: u64 = 64 * 1024 * 1024;

/// A byte-count progress bar on stderr, or a hidden one when stderr is not a terminal, `quiet` is set or
/// `total` is below [`THRESHOLD`].
#[must_use]
pub fn bytes(total: u64, message: &str, quiet: bool) -> ProgressBar {
    if quiet || total < THRESHOLD || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style =
        ProgressStyle::with_template("{msg} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    bar.set_style(style);
    bar.set_message(message.to_owned());
    bar
}
