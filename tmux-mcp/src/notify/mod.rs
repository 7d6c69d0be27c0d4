//! Attention events carried outside tool replies: into the MCP client's
//! channel ([`channel`], `--channel claude`) and to a signed webhook
//! ([`webhook`], `--notify-webhook URL`).
//!
//! Contract: both read the process's attention log (`terminal::attention`)
//! as it grows and never hold up a writer of it; delivery is at most once
//! for the channel and retried in order for the webhook, and every event
//! is still carried by the tool results and `wait_for_attention`. This
//! layer sits above the tools (it shows events as `wait_for_attention`
//! does) and beneath the transports; the server's handler starts it once
//! the session is initialised.

pub(crate) mod channel;
pub(crate) mod webhook;
