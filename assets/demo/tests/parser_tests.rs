use csvlite::{parse_line, ParseError};

#[test]
fn plain_fields() {
    assert_eq!(parse_line("a,b,c").unwrap(), vec!["a", "b", "c"]);
}

#[test]
fn quoted_field_with_comma() {
    assert_eq!(parse_line("1,\"Smith, Jane\",x").unwrap(), vec!["1", "Smith, Jane", "x"]);
}

#[test]
fn parses_escaped_quotes() {
    assert_eq!(
        parse_line("7,\"Monitor 27\"\", matte\",2").unwrap(),
        vec!["7", "Monitor 27\", matte", "2"]
    );
}

#[test]
fn unterminated_quote_is_an_error() {
    assert_eq!(parse_line("1,\"open"), Err(ParseError::UnterminatedQuote));
}
