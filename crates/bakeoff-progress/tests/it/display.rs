//! The display itself: lines and statuses as plain lines off a terminal, per-request counts
//! never, and untrusted text escaped.

use bakeoff_progress::Progress;

#[test]
fn off_a_terminal_statuses_and_lines_are_plain_lines_and_transients_are_not_drawn() {
    let (p, lines) = Progress::capture();
    p.status("[smoke] starting: 6 items");
    p.transient("[load] c=4: 17/40 requests, 3 s elapsed");
    p.line("[smoke] complete: 6/6 items in 12 s");
    p.finish();
    assert_eq!(
        *lines.lock().unwrap(),
        [
            "[smoke] starting: 6 items",
            "[smoke] complete: 6/6 items in 12 s"
        ]
    );
}

#[test]
fn text_from_a_server_cannot_drive_the_terminal() {
    let (p, lines) = Progress::capture();
    p.line("[preflight] unfit: \u{1b}[2J\u{1b}]0;owned\u{7}server said\nno");
    p.status("\u{9b}31mred");
    let lines = lines.lock().unwrap().clone();
    assert_eq!(lines.len(), 2, "{lines:?}");
    for l in &lines {
        assert!(!l.chars().any(char::is_control), "{l:?}");
    }
    assert_eq!(
        lines[0],
        "[preflight] unfit: \\u{1b}[2J\\u{1b}]0;owned\\u{7}server said⏎no"
    );
}

#[test]
fn a_status_is_cut_and_a_line_kept_whole_up_to_their_limits() {
    let (p, lines) = Progress::capture();
    let long = "x".repeat(1000);
    p.status(&long);
    p.line(&long);
    let lines = lines.lock().unwrap().clone();
    assert_eq!(
        lines[0].chars().count(),
        401,
        "400 characters and the mark of the cut"
    );
    assert!(lines[0].ends_with('…'));
    assert_eq!(lines[1], long);
}
