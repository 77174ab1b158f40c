//! Item 9: nothing at run time depends on the build tree. The built binary holds no path of
//! the build tree in what it loads (its allocated ELF sections; debug info is not loaded),
//! the demo project comes out of the binary whole, and a `--workspace` that is a file gets an
//! error saying so.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::cli::SCRIPTED_RUN;
use crate::common::scratch::{Scratch, binary};

/// The bytes of every section a loader maps (SHF_ALLOC) of a 64-bit little-endian ELF file.
fn loaded_sections(elf: &[u8]) -> Vec<&[u8]> {
    let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap()) as usize;
    assert_eq!(&elf[..4], b"\x7fELF", "not an ELF file");
    assert_eq!(elf[4], 2, "not a 64-bit ELF file");
    let (shoff, shentsize, shnum) = (u64_at(0x28), u16_at(0x3a), u16_at(0x3c));
    const SHF_ALLOC: usize = 2;
    const SHT_NOBITS: u32 = 8;
    (0..shnum)
        .filter_map(|i| {
            let h = shoff + i * shentsize;
            let kind = u32::from_le_bytes(elf[h + 4..h + 8].try_into().unwrap());
            let (flags, offset, size) = (u64_at(h + 8), u64_at(h + 0x18), u64_at(h + 0x20));
            (flags & SHF_ALLOC != 0 && kind != SHT_NOBITS).then(|| &elf[offset..offset + size])
        })
        .collect()
}

#[test]
fn the_binary_holds_no_path_of_the_build_tree() {
    let elf = std::fs::read(binary()).unwrap();
    let manifest = env!("CARGO_MANIFEST_DIR").as_bytes();
    let sections = loaded_sections(&elf);
    assert!(sections.len() > 3, "no sections found");
    for section in sections {
        assert!(
            !section.windows(manifest.len()).any(|w| w == manifest),
            "the binary carries {}",
            env!("CARGO_MANIFEST_DIR")
        );
    }
}

/// Every file under `root`, relative path -> (bytes, executable).
fn tree(root: &Path) -> std::collections::BTreeMap<String, (Vec<u8>, bool)> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                let mode = std::fs::metadata(&path).unwrap().permissions().mode();
                out.insert(rel, (std::fs::read(&path).unwrap(), mode & 0o111 != 0));
            }
        }
    }
    out
}

#[test]
fn the_demo_project_comes_out_of_the_binary_whole() {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let s = Scratch::new();
    ctxlab::demo::write_demo_project(&s.ws()).unwrap();
    assert_eq!(tree(&s.ws()), tree(&assets));
    // And through the binary: a run in an empty folder gets the same project.
    let fresh = s.path().join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    let out = s.scripted_run(&fresh).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = tree(&fresh);
    for (rel, (_, executable)) in tree(&assets) {
        assert!(written.contains_key(&rel), "{rel} missing");
        assert_eq!(written[&rel].1, executable, "{rel}: execute bit");
    }
}

#[test]
fn a_workspace_that_is_a_file_is_an_error_that_says_so() {
    let s = Scratch::new();
    let file = s.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    for args in [
        SCRIPTED_RUN.to_vec(),
        vec!["--provider", "scripted", "--workspace"],
    ] {
        let out = s.ctxlab().args(&args).arg(&file).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("afile") && stderr.contains("not a folder"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("File exists"), "{stderr}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}
