//! ctxlab's own session recordings (issue 22): the tour's live run recorded and read back,
//! its replay against the live run stage by stage, the file's shape, and the binary's
//! recording of `ctxlab run`.

mod cli;
mod compare;
mod replay;
