//! Drawing for snapshot tests: a screen rendered through ratatui's TestBackend, read
//! back as plain text (a wide character takes its two cells).

use plexus::model::state::RunState;
use plexus::tui::app::keymap::Keymap;
use plexus::tui::app::UiState;
use plexus::tui::ui::theme::Theme;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

/// The buffer as lines of text, trailing spaces trimmed.
pub fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..buf.area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            line.push_str(sym);
            skip = unicode_width::UnicodeWidthStr::width(sym).saturating_sub(1);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The workbench's screen for `st` and `ui` at `w`x`h`, dark theme, default keys.
pub fn render(st: &RunState, ui: &mut UiState, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    let theme = Theme::dark();
    let keys = Keymap::default_keys();
    term.draw(|f| plexus::tui::ui::draw(f, st, ui, &theme, &keys))
        .expect("draw");
    buffer_text(term.backend().buffer())
}
