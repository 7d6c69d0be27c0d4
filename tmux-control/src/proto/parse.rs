//! Line parsers (nom, private). The decoder frames lines first; these turn
//! one complete line, without its terminator, into a typed value.

use bytes::Bytes;
use nom::bytes::complete::{take_while, take_while1};
use nom::character::complete::{char, digit1};
use nom::combinator::{all_consuming, opt, rest};
use nom::sequence::preceded;
use nom::{IResult, Parser};

use super::escape::unescape_output_bytes;
use super::frame::{Notification, ReplyHeader};
use crate::ids::{PaneId, SessionId, WindowId, parse_u32};

/// The kind of guard line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Guard {
    Begin,
    End,
    Error,
}

type Res<'a, T> = IResult<&'a [u8], T>;

fn number_u32(i: &[u8]) -> Res<'_, u32> {
    let (i, d) = digit1(i)?;
    match parse_u32(d) {
        Some(n) => Ok((i, n)),
        None => Err(nom::Err::Error(nom::error::Error::new(
            d,
            nom::error::ErrorKind::TooLarge,
        ))),
    }
}

fn number_u64(i: &[u8]) -> Res<'_, u64> {
    let (i, d) = digit1(i)?;
    let mut n: u64 = 0;
    for &c in d {
        n = match n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(c - b'0')))
        {
            Some(n) => n,
            None => {
                return Err(nom::Err::Error(nom::error::Error::new(
                    d,
                    nom::error::ErrorKind::TooLarge,
                )));
            }
        };
    }
    Ok((i, n))
}

fn number_i64(i: &[u8]) -> Res<'_, i64> {
    let (rest, n) = number_u64(i)?;
    match i64::try_from(n) {
        Ok(n) => Ok((rest, n)),
        Err(_) => Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::TooLarge,
        ))),
    }
}

fn pane(i: &[u8]) -> Res<'_, PaneId> {
    preceded(char('%'), number_u32).map(PaneId).parse(i)
}

fn window(i: &[u8]) -> Res<'_, WindowId> {
    preceded(char('@'), number_u32).map(WindowId).parse(i)
}

fn session(i: &[u8]) -> Res<'_, SessionId> {
    preceded(char('$'), number_u32).map(SessionId).parse(i)
}

fn sp(i: &[u8]) -> Res<'_, char> {
    char(' ')(i)
}

/// A run of bytes without spaces (may be empty).
fn word(i: &[u8]) -> Res<'_, &[u8]> {
    take_while(|b| b != b' ')(i)
}

/// A non-empty run of bytes without spaces.
fn word1(i: &[u8]) -> Res<'_, &[u8]> {
    take_while1(|b| b != b' ')(i)
}

/// Parses `%begin T N F`, `%end T N F` or `%error T N F` (the whole line).
pub(crate) fn guard(line: &[u8]) -> Option<(Guard, ReplyHeader)> {
    let kind = if line.starts_with(b"%begin ") {
        Guard::Begin
    } else if line.starts_with(b"%end ") {
        Guard::End
    } else if line.starts_with(b"%error ") {
        Guard::Error
    } else {
        return None;
    };
    let numbers = (
        preceded(
            (char('%'), take_while1(|b: u8| b.is_ascii_lowercase()), sp),
            number_i64,
        ),
        preceded(sp, number_u32),
        preceded(sp, number_u32),
    );
    let (_, (time, number, flags)) = all_consuming(numbers).parse(line).ok()?;
    Some((
        kind,
        ReplyHeader {
            time,
            number,
            flags,
        },
    ))
}

/// Why a `%` line with a known name did not parse.
pub(crate) type Malformed = &'static str;

/// Parses a `%` line (outside a block, not a guard line) into a notification.
///
/// `line` is the whole line without terminator and starts with `%`.
pub(crate) fn notification(line: &Bytes) -> Result<Notification, Malformed> {
    let body = &line[1..];
    let (name, args, has_args) = match memchr::memchr(b' ', body) {
        Some(sp) => (&body[..sp], &body[sp + 1..], true),
        None => (body, &body[body.len()..], false),
    };
    let b = |s: &[u8]| line.slice_ref(s);
    // Parses `args` completely with `p`, or fails with `what`.
    macro_rules! args {
        ($p:expr, $what:literal) => {
            match all_consuming($p).parse(args) {
                Ok((_, v)) => v,
                Err(_) => return Err($what),
            }
        };
    }
    use Notification as N;
    let n = match name {
        b"output" => {
            if !has_args {
                return Err("expected %output %PANE DATA");
            }
            let (p, data) = args!(
                (pane, opt(preceded(sp, rest))),
                "expected %output %PANE DATA"
            );
            let data = b(data.unwrap_or_default());
            let data =
                unescape_output_bytes(&data).map_err(|_| "bad octal escape in %output data")?;
            N::Output { pane: p, data }
        }
        b"extended-output" => extended_output(args, &b)?,
        b"pause" => N::Pause {
            pane: args!(pane, "expected %pause %PANE"),
        },
        b"continue" => N::Continue {
            pane: args!(pane, "expected %continue %PANE"),
        },
        b"pane-mode-changed" => N::PaneModeChanged {
            pane: args!(pane, "expected %pane-mode-changed %PANE"),
        },
        b"window-add" => N::WindowAdd {
            window: args!(window, "expected %window-add @WINDOW"),
        },
        b"unlinked-window-add" => N::UnlinkedWindowAdd {
            window: args!(window, "expected %unlinked-window-add @WINDOW"),
        },
        b"window-close" => N::WindowClose {
            window: args!(window, "expected %window-close @WINDOW"),
        },
        b"unlinked-window-close" => N::UnlinkedWindowClose {
            window: args!(window, "expected %unlinked-window-close @WINDOW"),
        },
        b"window-renamed" => {
            let (w, name) = args!(
                (window, opt(preceded(sp, rest))),
                "expected %window-renamed @WINDOW NAME"
            );
            N::WindowRenamed {
                window: w,
                name: b(name.unwrap_or_default()),
            }
        }
        b"unlinked-window-renamed" => {
            let (w, name) = args!(
                (window, opt(preceded(sp, rest))),
                "expected %unlinked-window-renamed @WINDOW NAME"
            );
            N::UnlinkedWindowRenamed {
                window: w,
                name: b(name.unwrap_or_default()),
            }
        }
        b"window-pane-changed" => {
            let (w, p) = args!(
                (window, preceded(sp, pane)),
                "expected %window-pane-changed @WINDOW %PANE"
            );
            N::WindowPaneChanged { window: w, pane: p }
        }
        b"layout-change" => {
            let (w, layout, visible, flags) = args!(
                (
                    window,
                    preceded(sp, word),
                    opt(preceded(sp, word)),
                    opt(preceded(sp, rest))
                ),
                "expected %layout-change @WINDOW LAYOUT VISIBLE FLAGS"
            );
            N::LayoutChange {
                window: w,
                layout: b(layout),
                visible_layout: visible.map(b),
                flags: flags.map(b),
            }
        }
        b"session-changed" | b"session-renamed" => {
            let (s, name) = args!((session, opt(preceded(sp, rest))), "expected $SESSION NAME");
            let name = b(name.unwrap_or_default());
            if body.starts_with(b"session-changed") {
                N::SessionChanged { session: s, name }
            } else {
                N::SessionRenamed { session: s, name }
            }
        }
        b"client-session-changed" => {
            let (c, s, name) = args!(
                (word1, preceded(sp, session), opt(preceded(sp, rest))),
                "expected %client-session-changed CLIENT $SESSION NAME"
            );
            N::ClientSessionChanged {
                client: b(c),
                session: s,
                name: b(name.unwrap_or_default()),
            }
        }
        b"client-detached" => N::ClientDetached {
            client: b(args!(word1, "expected %client-detached CLIENT")),
        },
        b"sessions-changed" => {
            if has_args {
                return Err("%sessions-changed takes no arguments");
            }
            N::SessionsChanged
        }
        b"session-window-changed" => {
            let (s, w) = args!(
                (session, preceded(sp, window)),
                "expected %session-window-changed $SESSION @WINDOW"
            );
            N::SessionWindowChanged {
                session: s,
                window: w,
            }
        }
        b"subscription-changed" => subscription_changed(args, &b)?,
        b"exit" => N::Exit {
            reason: has_args.then(|| b(args)),
        },
        b"config-error" => N::ConfigError { text: b(args) },
        b"message" => N::Message { text: b(args) },
        b"paste-buffer-changed" => N::PasteBufferChanged { name: b(args) },
        b"paste-buffer-deleted" => N::PasteBufferDeleted { name: b(args) },
        _ => N::Other {
            name: b(name),
            args: b(args),
        },
    };
    Ok(n)
}

/// Splits `ARG ARG … : REST` into the arguments before a lone `:` and the
/// rest after `": "` (or nothing when the line ends right after the `:`).
fn until_colon(mut i: &[u8]) -> Option<(Vec<&[u8]>, &[u8])> {
    let mut args = Vec::new();
    loop {
        let end = memchr::memchr(b' ', i);
        let tok = &i[..end.unwrap_or(i.len())];
        if tok == b":" {
            return Some((args, end.map_or(&i[i.len()..], |e| &i[e + 1..])));
        }
        args.push(tok);
        i = &i[end? + 1..];
    }
}

fn extended_output(args: &[u8], b: &impl Fn(&[u8]) -> Bytes) -> Result<Notification, Malformed> {
    const WHAT: Malformed = "expected %extended-output %PANE AGE … : DATA";
    let (head, data) = until_colon(args).ok_or(WHAT)?;
    let [p, age, extra @ ..] = head.as_slice() else {
        return Err(WHAT);
    };
    let pane = PaneId::from_bytes(p).ok_or(WHAT)?;
    let (_, age_ms) = all_consuming(number_u64).parse(age).map_err(|_| WHAT)?;
    let data =
        unescape_output_bytes(&b(data)).map_err(|_| "bad octal escape in %extended-output data")?;
    Ok(Notification::ExtendedOutput {
        pane,
        age_ms,
        extra: extra.iter().map(|e| b(e)).collect(),
        data,
    })
}

fn subscription_changed(
    args: &[u8],
    b: &impl Fn(&[u8]) -> Bytes,
) -> Result<Notification, Malformed> {
    const WHAT: Malformed = "expected %subscription-changed NAME $S @W IDX %P … : VALUE";
    let (head, value) = until_colon(args).ok_or(WHAT)?;
    let [name, s, w, idx, p, extra @ ..] = head.as_slice() else {
        return Err(WHAT);
    };
    fn dash<T>(tok: &[u8], parse: impl Fn(&[u8]) -> Option<T>) -> Result<Option<T>, Malformed> {
        if tok == b"-" {
            Ok(None)
        } else {
            parse(tok).map(Some).ok_or(WHAT)
        }
    }
    let session = dash(s, SessionId::from_bytes)?;
    let window = dash(w, WindowId::from_bytes)?;
    let window_index = dash(idx, parse_u32)?;
    let pane = dash(p, PaneId::from_bytes)?;
    Ok(Notification::SubscriptionChanged {
        name: b(name),
        session,
        window,
        window_index,
        pane,
        extra: extra.iter().map(|e| b(e)).collect(),
        value: b(value),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards() {
        assert_eq!(
            guard(b"%begin 1 2 3"),
            Some((
                Guard::Begin,
                ReplyHeader {
                    time: 1,
                    number: 2,
                    flags: 3
                }
            ))
        );
        assert_eq!(guard(b"%error 1 2 3").map(|g| g.0), Some(Guard::Error));
        assert_eq!(guard(b"%end 1 2 3 "), None);
        assert_eq!(guard(b"%end 1 2"), None);
        assert_eq!(guard(b"%end 1 2 99999999999"), None);
        assert_eq!(guard(b"%ended 1 2 3"), None);
        assert_eq!(guard(b"%begin  1 2 3"), None);
    }

    #[test]
    fn subscription_forms() {
        let l = Bytes::from_static(b"%subscription-changed cf $0 - - - : a:b : c");
        let Notification::SubscriptionChanged {
            session,
            window,
            value,
            ..
        } = notification(&l).unwrap()
        else {
            panic!()
        };
        assert_eq!(session, Some(SessionId(0)));
        assert_eq!(window, None);
        assert_eq!(&value[..], b"a:b : c");
        let l = Bytes::from_static(b"%subscription-changed x $0 @1 2 %3 :");
        assert!(
            matches!(notification(&l), Ok(Notification::SubscriptionChanged { value, .. }) if value.is_empty())
        );
        let l = Bytes::from_static(b"%subscription-changed x $0 @1 2 %3");
        assert!(notification(&l).is_err());
    }
}
