//! Progress bars: shown only for long work, only on a terminal, never with `--quiet`.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Work smaller than this finishes too fast for a bar to help.
pub const THRESHOLD: u64 = 64 * 1024 * 1024;

/// Widest message before the bar, in columns; a longer one (a long file name) is cut.
pub const MESSAGE_WIDTH: usize = 32;

/// A byte-count progress bar on stderr, or a hidden one when stderr is not a terminal, `quiet` is set or
/// `total` is below [`THRESHOLD`]. The bar (`wide_bar`) takes the terminal's width left by the other fields,
/// and indicatif redraws it at the new width when the terminal is resized.
#[must_use]
pub fn bytes(total: u64, message: &str, quiet: bool) -> ProgressBar {
    if quiet || total < THRESHOLD || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style =
        ProgressStyle::with_template("{msg} [{wide_bar}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    bar.set_style(style);
    set_message(&bar, message);
    bar
}

/// Sets `bar`'s message to `message`, escaped and cut to [`MESSAGE_WIDTH`] columns.
pub fn set_message(bar: &ProgressBar, message: &str) {
    let safe = crate::text::escape(message);
    bar.set_message(crate::text::truncate_middle(&safe, MESSAGE_WIDTH).into_owned());
}
