//! Tests of the fork writers on files cut from the real agents' (tests below).
