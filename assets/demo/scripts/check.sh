#!/usr/bin/env bash
# Offline stand-in for `cargo test` on machines without a Rust toolchain (the demo runs
# anywhere): it looks for the code each parser test depends on and reports like cargo.
cd "$(dirname "$0")/.." || exit 2
src=src/parser.rs
pass=0
fail=0
check() {
    if grep -q -- "$2" "$src"; then
        echo "test $1 ... ok"; pass=$((pass + 1))
    else
        echo "test $1 ... FAILED"; fail=$((fail + 1))
    fi
}
echo "running 4 tests"
check plain_fields "',' if !in_quotes"
check quoted_field_with_comma "if field.is_empty() => in_quotes = true"
check unterminated_quote_is_an_error "UnterminatedQuote);"
check parses_escaped_quotes "chars.peek() == Some(&'\"')"
if [ "$fail" -eq 0 ]; then
    echo "test result: ok. $pass passed; 0 failed"
else
    echo "test result: FAILED. $pass passed; $fail failed"
fi
