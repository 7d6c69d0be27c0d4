//! `tmux-mcp web-key`: the named keys of the web view from the command
//! line (`add`, `list`, `revoke`), on the key store of `keys`.

use std::io::Write as _;
use std::process::ExitCode;

use super::keys::{KeyError, KeyInfo, KeyStore, Scope};
use crate::config::{Cli, WebKeyAction, WebKeyArgs};

/// The exit status of bad usage (as clap uses for bad flags).
const USAGE: u8 = 2;

/// Runs `tmux-mcp web-key`: returns the process's exit status (0 done, 1
/// a failure, 2 bad usage). It uses the state directory the server uses
/// (`--state-dir`, `TMUX_MCP_STATE_DIR`, or the default).
pub fn web_key_main(cli: &Cli, args: &WebKeyArgs) -> ExitCode {
    let state_dir = cli
        .state_dir
        .clone()
        .unwrap_or_else(crate::terminal::backend::default_state_dir);
    let store = KeyStore::new(&state_dir);
    let fail = |err: &KeyError| {
        eprintln!("tmux-mcp web-key: {err}");
        ExitCode::from(if err.is_usage() { USAGE } else { 1 })
    };
    match &args.action {
        WebKeyAction::Add { name, scope } => {
            let scope = Scope::from(*scope);
            let key = match store.add(name, scope) {
                Ok(key) => key,
                Err(err) => return fail(&err),
            };
            let text = format!(
                "key:  {key}\n\
                 link: /ui/#key={key}\n\
                 (after the web view's address, as in http://127.0.0.1:PORT/ui/#key=…)\n\
                 The key {name:?} (scope {scope}) is shown only this once: only its SHA-256 digest is kept, in {}.\n\
                 Revoke it with `tmux-mcp web-key revoke {name}`.\n",
                store.path().display()
            );
            if let Err(e) = print(&text) {
                // Nobody saw the key: it must not stay valid.
                let undone = match store.revoke(name) {
                    Ok(_) => "it was revoked again",
                    Err(_) => "revoke it with `tmux-mcp web-key revoke`",
                };
                eprintln!("tmux-mcp web-key: cannot print the new key ({e}); {undone}");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        WebKeyAction::List { json } => {
            let keys = match store.list() {
                Ok(keys) => keys,
                Err(err) => return fail(&err),
            };
            let text = if *json {
                match serde_json::to_string(&keys) {
                    Ok(json) => format!("{json}\n"),
                    Err(e) => {
                        eprintln!("tmux-mcp web-key: cannot write the list as JSON: {e}");
                        return ExitCode::FAILURE;
                    }
                }
            } else if keys.is_empty() {
                format!(
                    "No web keys in {} (make one with `tmux-mcp web-key add NAME`).\n",
                    store.path().display()
                )
            } else {
                table(&keys)
            };
            match print(&text) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("tmux-mcp web-key: cannot print the list: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        WebKeyAction::Revoke { name } => match store.revoke(name) {
            Ok(true) => {
                let _ = print(&format!(
                    "Revoked the web key {name:?}: its sessions end at their next request.\n"
                ));
                ExitCode::SUCCESS
            }
            Ok(false) => {
                eprintln!(
                    "tmux-mcp web-key: no web key named {name:?} in {}",
                    store.path().display()
                );
                ExitCode::FAILURE
            }
            Err(err) => fail(&err),
        },
    }
}

/// Writes `text` to standard output and flushes it.
fn print(text: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()
}

/// The keys as a table: name, scope, created.
pub(super) fn table(keys: &[KeyInfo]) -> String {
    let width = keys
        .iter()
        .map(|k| k.name.len())
        .max()
        .unwrap_or(0)
        .max("NAME".len());
    let mut out = format!("{:<width$}  SCOPE  CREATED\n", "NAME");
    for key in keys {
        out.push_str(&format!(
            "{:<width$}  {:<5}  {}\n",
            key.name, key.scope, key.created
        ));
    }
    out
}
