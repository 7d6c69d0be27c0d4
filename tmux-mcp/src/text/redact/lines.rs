//! Redacting lines (of a screen, of a read) as one text, so that a secret
//! that spans lines is masked whole: keeping every line
//! ([`Redactor::redact_lines`]), only a window of them with the rest as
//! context ([`Redactor::redact_window`]), or marking the lines a mask
//! swallowed ([`Redactor::redact_lines_marked`]).

use super::Redactor;

impl Redactor {
    /// Redacts screen lines as one text, so that a secret spanning lines
    /// (a private key block) is masked whole, while keeping the number of
    /// lines: each masked line break stays a line break, so line numbers
    /// still match the screen.
    pub(crate) fn redact_lines(&self, lines: &[String]) -> Vec<String> {
        let joined = lines.join("\n");
        let spans = self.spans(&joined, false);
        if spans.is_empty() {
            return lines.to_vec();
        }
        self.render(&joined, 0..joined.len(), &spans, true)
            .split('\n')
            .map(str::to_owned)
            .collect()
    }

    /// Redacts `lines` as one text like [`Redactor::redact_lines`] and
    /// returns only the lines in `window`: the lines around it are context,
    /// redacted with it and left out. So a window into a secret that spans
    /// lines (the middle of a key block, its BEGIN and END lines outside
    /// the window) is masked as the whole text masks it, the mask shown on
    /// the window's first line and the rest of the block's lines in the
    /// window emptied; the window keeps its number of lines.
    pub(crate) fn redact_window(
        &self,
        lines: &[String],
        window: std::ops::Range<usize>,
    ) -> Vec<String> {
        let end = window.end.min(lines.len());
        let start = window.start.min(end);
        let shown = &lines[start..end];
        if shown.is_empty() {
            return Vec::new();
        }
        let joined = lines.join("\n");
        let spans = self.spans(&joined, false);
        if spans.is_empty() {
            return shown.to_vec();
        }
        let from: usize = lines[..start].iter().map(|l| l.len() + 1).sum();
        let len: usize = shown.iter().map(|l| l.len() + 1).sum::<usize>() - 1;
        self.render(&joined, from..from + len, &spans, true)
            .split('\n')
            .map(str::to_owned)
            .collect()
    }

    /// Redacts lines as one text like [`Redactor::redact_lines`], and says
    /// of each line whether it lies wholly inside a mask that began on an
    /// earlier line (an emptied line of a masked block, which a reader
    /// showing the text compactly leaves out).
    pub(crate) fn redact_lines_marked(
        &self,
        lines: &[&str],
        open_end: bool,
    ) -> Vec<(String, bool)> {
        let joined = lines.join("\n");
        let spans = self.spans(&joined, open_end);
        let mut out = Vec::with_capacity(lines.len());
        let mut at = 0;
        let mut next = 0; // first span that may still touch a line
        for line in lines {
            let range = at..at + line.len();
            while next < spans.len() && spans[next].end <= range.start {
                next += 1;
            }
            let inside = spans
                .get(next)
                .is_some_and(|s| s.start < range.start && s.end >= range.end);
            let text = if inside {
                String::new()
            } else {
                self.render(&joined, range.clone(), &spans[next..], false)
            };
            out.push((text, inside));
            at = range.end + 1;
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use crate::text::redact::Redactor;

    #[test]
    fn a_key_block_across_lines_is_masked_whole_and_lines_are_kept() {
        let lines: Vec<String> = [
            "$ cat key",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
            "-----END OPENSSH PRIVATE KEY-----",
            "$ ",
        ]
        .map(String::from)
        .to_vec();
        let out = Redactor::new(true, &[]).unwrap().redact_lines(&lines);
        assert_eq!(out.len(), lines.len(), "{out:?}");
        assert!(!out.iter().any(|l| l.contains("b3BlbnNz")), "{out:?}");
        assert_eq!(out[0], "$ cat key");
        assert_eq!(out[4], "$ ");
    }

    #[test]
    fn a_key_body_without_its_begin_line_is_masked() {
        let lines: Vec<String> = [
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
            "AAAAAAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5",
            "-----END OPENSSH PRIVATE KEY-----",
            "$ ls",
        ]
        .map(String::from)
        .to_vec();
        let out = Redactor::new(true, &[]).unwrap().redact_lines(&lines);
        assert_eq!(out, ["[REDACTED:private-key]", "", "", "$ ls"]);
    }

    #[test]
    fn marked_lines_say_which_lines_a_mask_swallowed() {
        let red = Redactor::new(true, &[]).unwrap();
        let lines = [
            "before",
            "-----BEGIN EC PRIVATE KEY-----",
            "MHcCAQEEI",
            "-----END EC PRIVATE KEY-----",
            "after password=x",
        ];
        let out = red.redact_lines_marked(&lines, false);
        assert_eq!(
            out,
            [
                ("before".to_owned(), false),
                ("[REDACTED:private-key]".to_owned(), false),
                (String::new(), true),
                (String::new(), true),
                ("after password=[REDACTED:password]".to_owned(), false),
            ]
        );
    }

    #[test]
    fn a_window_into_a_key_block_is_masked_by_the_lines_around_it() {
        let red = Redactor::new(true, &[]).unwrap();
        let mut lines = vec![
            "$ cat key".to_owned(),
            "-----BEGIN OPENSSH PRIVATE KEY-----".to_owned(),
        ];
        let body: Vec<String> = (0..25)
            .map(|i| format!("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ{i:02}AAAA"))
            .collect();
        lines.extend(body.iter().cloned());
        lines.push("-----END OPENSSH PRIVATE KEY-----".to_owned());
        lines.push("$ ".to_owned());
        // Neither BEGIN nor END in the window: masked, with its six lines.
        let out = red.redact_window(&lines, 5..11);
        assert_eq!(out.len(), 6, "{out:?}");
        assert_eq!(out[0], "[REDACTED:private-key]");
        assert!(out[1..].iter().all(String::is_empty), "{out:?}");
        // The window alone would show them: it is the context that masks them.
        assert_eq!(red.redact_lines(&lines[5..11]), lines[5..11]);
        // A window that ends the block, and one past it.
        let out = red.redact_window(&lines, 20..29);
        assert_eq!(out[0], "[REDACTED:private-key]");
        assert_eq!(out[8], "$ ");
        assert!(!out.iter().any(|l| l.contains("b3Bl")), "{out:?}");
        // Text around a window without secrets comes back as it is.
        assert_eq!(red.redact_window(&lines, 0..1), ["$ cat key"]);
        assert_eq!(red.redact_window(&lines, 30..40), Vec::<String>::new());
        let plain = ["a".to_owned(), "b".to_owned(), "password=x".to_owned()];
        assert_eq!(
            red.redact_window(&plain, 1..3),
            ["b", "password=[REDACTED:password]"]
        );
    }
}
