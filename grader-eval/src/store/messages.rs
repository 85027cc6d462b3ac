//! What a store's error says: its causes on one line, led by what it most likely means (a
//! missing bucket, denied access, the network), an XML error document cut to its code and
//! message, and never a credential ([`elide`]: the values of secret variables, and the user
//! info and query strings of addresses).

/// The names of the environment variables whose values are never shown: any `AWS_`,
/// `GOOGLE_`, `AZURE_` or `OBJECT_STORE_` variable whose name speaks of a secret, key, token,
/// password, SAS or credential.
fn is_secret_variable(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["AWS_", "GOOGLE_", "AZURE_", "OBJECT_STORE_"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        && ["SECRET", "KEY", "TOKEN", "PASSWORD", "SAS", "CREDENTIAL"]
            .iter()
            .any(|word| name.contains(word))
}

/// A store error's message with its causes, credentials elided, led by what it most likely
/// means, with an XML error document from the store shortened to its code and message, on
/// one line.
pub(super) fn describe(error: &object_store::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    // An answer's body may span lines (or end with a line break): an error is one line.
    let message = shorten_xml(&elide(&message))
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let meaning = if message.contains("NoSuchBucket") {
        Some("the bucket does not exist")
    } else if message.contains("ContainerNotFound") {
        Some("the container does not exist")
    } else if matches!(
        error,
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. }
    ) || [
        "403 Forbidden",
        "AccessDenied",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
    ]
    .iter()
    .any(|code| message.contains(code))
    {
        Some("access denied")
    } else if message.contains("error sending request") || message.contains("timed out") {
        Some("network error")
    } else {
        None
    };
    match meaning {
        Some(meaning) => format!("{meaning} ({message})"),
        None => message,
    }
}

/// `text` with an XML error document (`<Error><Code>…</Code><Message>…</Message>…`) replaced
/// by `Code: Message`, the message cut at its first line break (Azure adds its request id and
/// time on the lines after).
fn shorten_xml(text: &str) -> String {
    let Some(start) = text.find("<?xml").or_else(|| text.find("<Error>")) else {
        return text.to_owned();
    };
    let field = |name: &str| {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let from = text[start..].find(&open)? + start + open.len();
        let to = text[from..].find(&close)? + from;
        Some(text[from..to].to_owned())
    };
    let mut short = text[..start].trim_end().to_owned();
    match (field("Code"), field("Message")) {
        (Some(code), Some(message)) => {
            let message = message.lines().next().unwrap_or_default().trim_end();
            short.push_str(&format!(" {code}: {message}"));
        }
        (Some(code), None) => short.push_str(&format!(" {code}")),
        _ => return text.to_owned(),
    }
    short
}

/// `text` with the values of secret environment variables replaced by `***`, and the query
/// strings and user info of the HTTP addresses in it elided.
pub fn elide(text: &str) -> String {
    elide_with(text, std::env::vars_os())
}

/// [`elide`] with the environment's variables given.
fn elide_with(
    text: &str,
    variables: impl IntoIterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> String {
    let mut text = text.to_owned();
    for (name, value) in variables {
        let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        // Shorter values are no secret worth the name, and replacing them would mangle
        // the message around them (a secret `test` inside `test-results`).
        if value.len() >= 8 && is_secret_variable(name) && text.contains(value) {
            text = text.replace(value, "***");
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = ["http://", "https://"]
        .iter()
        .filter_map(|scheme| rest.find(scheme))
        .min()
    {
        out.push_str(&rest[..at]);
        let address = &rest[at..];
        let end = address
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | '"' | '\'' | '>' | ','))
            .unwrap_or(address.len());
        out.push_str(&redact_url(&address[..end]));
        rest = &address[end..];
    }
    out.push_str(rest);
    out
}

/// A URL with its user info and query string elided.
pub(super) fn redact_url(url: &str) -> String {
    let (url, had_query) = match url.split_once(['?', '#']) {
        Some((before, _)) => (before, true),
        None => (url, false),
    };
    let mut shown = match url.split_once("://") {
        Some((scheme, rest)) => {
            let authority_end = rest.find('/').unwrap_or(rest.len());
            match rest[..authority_end].rfind('@') {
                Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
                None => url.to_owned(),
            }
        }
        None => url.to_owned(),
    };
    if had_query {
        shown.push_str("?***");
    }
    if shown.chars().any(char::is_control) {
        // A line break or tab in a URL would split or blur the message that shows it.
        shown = shown
            .chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect();
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_in_messages_lose_their_query_strings_and_user_info() {
        let text = "error sending request for url (https://acct.blob.core.windows.net/c/x?sig=abc&se=1): \
                    refused by http://user:pw@host:9/p, see https://docs/";
        assert_eq!(
            elide(text),
            "error sending request for url (https://acct.blob.core.windows.net/c/x?***): \
             refused by http://***@host:9/p, see https://docs/"
        );
    }

    #[test]
    fn only_secrets_long_enough_to_be_keys_are_elided() {
        let vars = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(name, value)| (name.into(), value.into()))
                .collect::<Vec<(std::ffi::OsString, std::ffi::OsString)>>()
        };
        let text = "s3://test-results/x: refused with wJalrXUtnFEMI/K7MDENG, encryption true";
        assert_eq!(
            elide_with(
                text,
                vars(&[
                    ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG"),
                    ("AWS_ACCESS_KEY_ID", "test"),
                    ("AWS_SSE_BUCKET_KEY_ENABLED", "true"),
                    ("HOME_SECRET_OF_ANOTHER_TOOL", "encryption"),
                ])
            ),
            "s3://test-results/x: refused with ***, encryption true"
        );
    }

    #[test]
    fn a_store_error_whose_answer_spans_lines_is_described_on_one_line() {
        let error = object_store::Error::Generic {
            store: "GCS",
            source: "PUT failed - 400 Bad Request:\r\n{\"error\": \"invalid\"}\n\n  more\r".into(),
        };
        assert_eq!(
            describe(&error),
            "Generic GCS error: PUT failed - 400 Bad Request: {\"error\": \"invalid\"} more"
        );
    }

    #[test]
    fn error_documents_are_shortened_to_code_and_message() {
        let text = "GET http://h/b?*** - 404 Not Found: <?xml version=\"1.0\"?>\n<Error><Code>\
                    NoSuchBucket</Code><Message>The bucket does not exist</Message><RequestId>x\
                    </RequestId></Error>";
        assert_eq!(
            shorten_xml(text),
            "GET http://h/b?*** - 404 Not Found: NoSuchBucket: The bucket does not exist"
        );
        assert_eq!(shorten_xml("no document"), "no document");
        let azure = "404 Not Found: <?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>\
                     ContainerNotFound</Code><Message>The specified container does not exist.\n\
                     RequestId:319e\nTime:2026-01-01T00:00:00Z</Message></Error>";
        assert_eq!(
            shorten_xml(azure),
            "404 Not Found: ContainerNotFound: The specified container does not exist."
        );
    }
}
