//! A Git repository in a [`Sandbox`] for hermetic tests of `helm cozy` against Git refs: `repo/` in the
//! sandbox, with the real Helm and kubectl of [`super::tools`] in the sandbox's environment and git the
//! only program on its PATH.

#![allow(dead_code)] // each test binary uses its own part of this

use std::process::Command;

use super::cli::Sandbox;
use super::tools::{Helm, tools};

pub struct GitRepo {
    pub sandbox: Sandbox,
}

impl GitRepo {
    /// An empty repository (`git init`, branch main) for `helm cozy` run with `helm`.
    pub fn new(helm: Helm) -> GitRepo {
        let t = tools();
        let mut sandbox = Sandbox::new();
        sandbox.set_env("HELM_BIN", helm.bin());
        sandbox.set_env("COZYHR_KUBECTL", &t.kubectl);
        // helm cozy finds git on PATH, which holds nothing else.
        std::os::unix::fs::symlink(&t.git, sandbox.path("bin/git")).expect("link git");
        std::fs::create_dir_all(sandbox.path("repo")).expect("mkdir repo");
        let repo = GitRepo { sandbox };
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    /// `git ARGS` in the repository, as its own author; its stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new(&tools().git)
            .args(args)
            .current_dir(self.sandbox.path("repo"))
            .env_clear()
            .env("HOME", self.sandbox.path("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            // The test's own `git status` must not refresh the index it compares.
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Everything added and committed as `message`.
    pub fn commit_all(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    /// Writes repository path `rel`.
    pub fn write(&self, rel: &str, text: &str) {
        self.sandbox.write(&format!("repo/{rel}"), text);
    }

    /// A symbolic link at repository path `rel` to `target` (as written, relative to the link).
    pub fn link(&self, rel: &str, target: &str) {
        let path = self.sandbox.path(&format!("repo/{rel}"));
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::os::unix::fs::symlink(target, path).expect("link");
    }

    /// Replaces `from` with `to` in repository path `rel` (which must hold it).
    pub fn edit(&self, rel: &str, from: &str, to: &str) {
        let path = self.sandbox.path(&format!("repo/{rel}"));
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.contains(from), "{rel} has no {from:?}");
        std::fs::write(&path, text.replace(from, to)).expect("write");
    }

    /// What `helm cozy` must leave as it was: the working tree, the index and HEAD.
    pub fn state(&self) -> (String, String, Vec<u8>, String) {
        let index = std::fs::read(self.sandbox.path("repo/.git/index")).expect("the index");
        (self.git(&["status", "--porcelain"]), self.git(&["diff"]), index, self.git(&["rev-parse", "HEAD"]))
    }
}
