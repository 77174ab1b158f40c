//! The demo project the scripted tour works on, compiled into the binary (build.rs makes the
//! table from `assets/demo/`), so an installed `ctxlab` plays the tour from any folder with
//! the source tree gone. It only writes the project out into a folder it is given; it never
//! reads the build tree.

use std::io;
use std::path::Path;

/// One file of the demo project.
#[derive(Debug, Clone, Copy)]
pub struct DemoFile {
    /// Relative to the project's root, `/`-separated.
    pub path: &'static str,
    pub bytes: &'static [u8],
    /// Gets the execute bits (`scripts/check.sh`).
    pub executable: bool,
}

include!(concat!(env!("OUT_DIR"), "/demo_files.rs"));

/// The demo project's files, sorted by path.
pub fn demo_files() -> &'static [DemoFile] {
    DEMO_FILES
}

/// Writes the demo project into `root` (created if missing). Files that exist are replaced.
pub fn write_demo_project(root: &Path) -> io::Result<()> {
    std::fs::create_dir_all(root)?;
    for file in DEMO_FILES {
        let path = file
            .path
            .split('/')
            .fold(root.to_path_buf(), |p, part| p.join(part));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, file.bytes)?;
        if file.executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(())
}
