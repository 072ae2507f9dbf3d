//! A terminal for the agents' TUIs in tests: tmux on a private socket (the agent runs in a real
//! pty as a user runs it), keys typed into it, its screen read back, killed when dropped.

/// A terminal run through tmux on a private socket, killed when dropped.
pub struct Tmux {
    socket: std::path::PathBuf,
}

impl Tmux {
    /// Starts `command` in a new 160×50 terminal in `cwd`, with `env` added to its environment.
    pub fn start(
        socket: std::path::PathBuf,
        cwd: &std::path::Path,
        env: &[(String, String)],
        command: &str,
    ) -> Tmux {
        let mut tmux = std::process::Command::new("tmux");
        tmux.arg("-S")
            .arg(&socket)
            .args([
                "new-session",
                "-d",
                "-s",
                "agent",
                "-x",
                "160",
                "-y",
                "50",
                "-c",
            ])
            .arg(cwd);
        for (k, v) in env {
            tmux.args(["-e", &format!("{k}={v}")]);
        }
        tmux.args(["-e", "TERM=xterm-256color"]).arg(command);
        let status = tmux
            .status()
            .expect("tmux (the terminal for the agent's TUI)");
        assert!(status.success(), "tmux new-session failed");
        Tmux { socket }
    }

    /// Types each of `keys` (text, or a tmux key name such as `Enter`), with a pause after each.
    pub fn keys(&self, keys: &[&str]) {
        for key in keys {
            let status = std::process::Command::new("tmux")
                .arg("-S")
                .arg(&self.socket)
                .args(["send-keys", "-t", "agent", key])
                .status()
                .expect("tmux send-keys");
            assert!(status.success());
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
    }

    /// What the terminal shows now.
    pub fn screen(&self) -> String {
        let out = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["capture-pane", "-p", "-t", "agent"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows `text`.
    pub fn wait_for(&self, text: &str, secs: u64) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        while std::time::Instant::now() < deadline {
            if self.screen().contains(text) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        panic!(
            "the agent's terminal never showed {text:?}:\n{}",
            self.screen()
        );
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .status();
    }
}
