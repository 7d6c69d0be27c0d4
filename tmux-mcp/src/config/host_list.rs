//! The `--host` values of the command line read into host specs: several
//! in one value (comma or newline separated), each checked ([`super::hosts`]
//! parses one).

use super::cli::Cli;
use super::error::ConfigError;
use super::hosts::{HostSpec, check_host_name};

/// Splits the values of `--host` / `TMUX_MCP_HOSTS` into single host
/// specs: at newlines, and at commas that start a new `NAME=` (a comma
/// inside ssh options, as in `-o Ciphers=a,b`, stays).
pub(super) fn split_host_values(values: &[String]) -> Vec<String> {
    let starts_spec = |rest: &str| {
        let rest = rest.trim_start();
        rest.split_once('=').is_some_and(|(name, _)| {
            check_host_name(name.trim()).is_ok() && !name.trim().is_empty()
        })
    };
    let mut specs = Vec::new();
    for value in values {
        for line in value.lines() {
            let mut current = String::new();
            let mut rest = line;
            while let Some(at) = rest.find(',') {
                let (head, tail) = (&rest[..at], &rest[at + 1..]);
                current.push_str(head);
                if starts_spec(tail) {
                    specs.push(std::mem::take(&mut current));
                } else {
                    current.push(',');
                }
                rest = tail;
            }
            current.push_str(rest);
            specs.push(current);
        }
    }
    specs.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

/// The hosts of the command line, the variable and the hosts file, checked
/// for duplicates.
pub(super) fn hosts_from_cli(cli: &Cli) -> Result<Vec<HostSpec>, ConfigError> {
    let mut specs = split_host_values(&cli.hosts);
    if let Some(path) = &cli.hosts_file {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::HostsFile {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        specs.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned),
        );
    }
    let mut hosts: Vec<HostSpec> = Vec::new();
    for spec in specs {
        let host = HostSpec::parse(&spec)?;
        if hosts.iter().any(|h| h.name == host.name) {
            return Err(ConfigError::BadHost {
                spec: spec.trim().to_owned(),
                reason: format!("the host name {:?} is given twice", host.name),
            });
        }
        hosts.push(host);
    }
    Ok(hosts)
}
