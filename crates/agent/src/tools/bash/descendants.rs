//! Ending what a `bash` call left behind that its process-group kill misses. A command can
//! move a child into a group of its own (`setpgid`) or a session of its own (`setsid`); the
//! group kill does not reach either.
//!
//! On Linux, every process of the call's session (the shell started one with `setsid`, and
//! `setpgid` cannot leave it) is found in /proc and killed. A process that started a session
//! of its own is reached through its parent: when ctxlab is a child subreaper
//! (`process::adopt_orphans`, done by the binary), every orphaned descendant becomes ctxlab's
//! child, so after the kill the children of ctxlab that are not running shells are tool
//! processes and are killed and reaped. A library user that did not ask to adopt orphans has
//! its other children left alone. On macOS only the group kill holds (docs in README.md,
//! "Security model").

use rustix::process::Pid;

/// Kills every process of `sessions` and, when ctxlab adopts orphans, every child of ctxlab
/// that is neither a shell in `spared` nor in one of their sessions; reaps the children it
/// killed. Repeats while it finds processes it had not seen, so a fork during the sweep is
/// caught too (bounded). Returns how many processes were signalled.
pub(super) fn sweep(sessions: &[Pid], spared: &[Pid]) -> usize {
    imp::sweep(sessions, spared)
}

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::HashSet;

    use rustix::process::{Pid, Signal, WaitOptions};

    /// Rounds of looking again for processes forked while the last round killed.
    const MAX_ROUNDS: usize = 16;

    /// The fields of /proc/<pid>/stat the sweep needs.
    struct Stat {
        pid: Pid,
        state: char,
        ppid: i32,
        session: i32,
    }

    /// Every process /proc shows now (entries that vanish or do not parse are skipped).
    fn processes() -> Vec<Stat> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| {
                let raw: i32 = e.file_name().to_str()?.parse().ok()?;
                let pid = Pid::from_raw(raw.max(0))?;
                let text = std::fs::read_to_string(e.path().join("stat")).ok()?;
                parse_stat(pid, &text)
            })
            .collect()
    }

    /// The fields after the command name of a /proc/<pid>/stat line.
    fn parse_stat(pid: Pid, text: &str) -> Option<Stat> {
        // The command name is in parentheses and may itself hold ')'.
        let rest = text.rsplit_once(')')?.1;
        let mut fields = rest.split_whitespace();
        let state = fields.next()?.chars().next()?;
        let ppid = fields.next()?.parse().ok()?;
        let _pgrp = fields.next()?;
        let session = fields.next()?.parse().ok()?;
        Some(Stat {
            pid,
            state,
            ppid,
            session,
        })
    }

    /// ctxlab's own session id as /proc gives it. Read from /proc rather than asked with
    /// getsid because in a PID namespace (a container, CI) the session leader can be outside
    /// it and the id is 0, which is no valid `Pid`; 0 still compares right with the other
    /// processes of that session, which /proc shows with 0 too.
    fn my_session(me: Pid) -> Option<i32> {
        let text = std::fs::read_to_string("/proc/self/stat").ok()?;
        parse_stat(me, &text).map(|s| s.session)
    }

    pub(super) fn sweep(sessions: &[Pid], spared: &[Pid]) -> usize {
        let me = rustix::process::getpid();
        let my_session = my_session(me);
        let adopting = rustix::process::child_subreaper().ok().flatten().is_some();
        let in_sessions = |sid: i32| sessions.iter().any(|s| s.as_raw_nonzero().get() == sid);
        let spared_session = |sid: i32| spared.iter().any(|s| s.as_raw_nonzero().get() == sid);
        let mut killed: HashSet<Pid> = HashSet::new();
        for _ in 0..MAX_ROUNDS {
            let mut fresh = 0;
            for p in processes() {
                // ctxlab itself, and the calls' shells: their group kill and tokio deal with them.
                if p.pid == me || sessions.contains(&p.pid) {
                    continue;
                }
                let ours = p.ppid == me.as_raw_nonzero().get();
                let orphan_of_a_call = adopting
                    && ours
                    && !spared.contains(&p.pid)
                    && !spared_session(p.session)
                    && my_session.is_none_or(|s| s != p.session);
                let of_a_session = in_sessions(p.session) && !spared.contains(&p.pid);
                if !of_a_session && !orphan_of_a_call {
                    continue;
                }
                if p.state != 'Z' && killed.insert(p.pid) {
                    let _ = rustix::process::kill_process(p.pid, Signal::KILL);
                    fresh += 1;
                }
                if ours {
                    // Our own child (adopted): reap it once dead, or it stays a zombie.
                    let _ = rustix::process::waitpid(Some(p.pid), WaitOptions::NOHANG);
                }
            }
            if fresh == 0 {
                break;
            }
        }
        if adopting {
            reap_killed(&killed);
        }
        killed.len()
    }

    #[cfg(test)]
    pub(super) fn parse_stat_for_test(pid: i32, text: &str) -> Option<(char, i32, i32)> {
        let s = parse_stat(Pid::from_raw(pid)?, text)?;
        Some((s.state, s.ppid, s.session))
    }

    #[cfg(test)]
    pub(super) fn own_session_for_test() -> Option<i32> {
        my_session(rustix::process::getpid())
    }

    /// Reaps the adopted children just killed (SIGKILL ends them within moments).
    fn reap_killed(killed: &HashSet<Pid>) {
        for _ in 0..50 {
            let me = rustix::process::getpid().as_raw_nonzero().get();
            let left: Vec<Stat> = processes()
                .into_iter()
                .filter(|p| p.ppid == me && killed.contains(&p.pid))
                .collect();
            if left.is_empty() {
                return;
            }
            for p in left {
                let _ = rustix::process::waitpid(Some(p.pid), WaitOptions::NOHANG);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::imp::parse_stat_for_test as parse;

    #[test]
    fn a_session_outside_the_pid_namespace_reads_as_zero() {
        // What /proc shows for a process whose session leader is outside its PID namespace.
        let stat = parse(7, "7 (sh) S 1 0 0 0 -1 4194560 0 0").map(|s| (s.1, s.2));
        assert_eq!(stat, Some((1, 0)));
    }

    #[test]
    fn a_command_name_holding_a_parenthesis_is_skipped_whole() {
        let stat = parse(9, "9 (a) b) R 3 9 9 0").map(|s| (s.0, s.1, s.2));
        assert_eq!(stat, Some(('R', 3, 9)));
    }

    #[test]
    fn own_session_is_read_without_panicking() {
        // getsid on a PID-namespaced CI runner gave 0 and rustix's Pid asserted on it.
        assert!(super::imp::own_session_for_test().is_some());
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use rustix::process::Pid;

    /// Without /proc and a subreaper there is nothing more to find: the group kill is all.
    pub(super) fn sweep(_sessions: &[Pid], _spared: &[Pid]) -> usize {
        0
    }
}
