//! Where an object store URL points ([`StoreUrl`]: scheme, bucket and prefix, parsed
//! strictly, shown without credentials), and how its store is reached (configured from the
//! environment, with the retries of [`StoreOptions`]).

use std::fmt;
use std::sync::Arc;

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, RetryConfig};

use super::StoreOptions;
use super::messages::{describe, redact_url};
use crate::error::StoreError;

/// The URL schemes read and written through object storage.
pub const SCHEMES: [&str; 3] = ["s3", "gs", "az"];

/// Where an object store URL points: scheme, bucket (or container) and prefix. Its `Display`
/// is the URL.
///
/// ```
/// use grader_eval::store::StoreUrl;
///
/// let url = StoreUrl::parse("gs://bucket/evals/run-1/")?;
/// assert_eq!(url.to_string(), "gs://bucket/evals/run-1");
/// assert!(StoreUrl::is_url("az://container/x"));
/// assert!(!StoreUrl::is_url("results/x.jsonl"));
/// let refused = StoreUrl::parse("s3://AKIA:hunter2@bucket/x").unwrap_err();
/// assert!(!refused.to_string().contains("hunter2"));
/// # Ok::<(), grader_eval::store::StoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreUrl {
    pub(super) scheme: &'static str,
    pub(super) bucket: String,
    pub(super) prefix: ObjectPath,
}

impl StoreUrl {
    /// Whether `text` starts with one of the [`SCHEMES`] and `://`: such a path is read and
    /// written through object storage. (A local folder named `s3:` is reached as `./s3:/…`.)
    #[must_use]
    pub fn is_url(text: &str) -> bool {
        SCHEMES.iter().any(|scheme| {
            text.strip_prefix(scheme)
                .is_some_and(|rest| rest.starts_with("://"))
        })
    }

    /// The URL of `path` when it is one ([`is_url`](Self::is_url)), parsed.
    #[must_use]
    pub fn of_path(path: &std::path::Path) -> Option<Result<StoreUrl, StoreError>> {
        let text = path.to_str()?;
        Self::is_url(text).then(|| Self::parse(text))
    }

    /// Parses `scheme://bucket/prefix` (the prefix may be empty; a trailing `/` is ignored).
    ///
    /// # Errors
    /// [`StoreError::InvalidUrl`] for another scheme, a missing bucket or one with a character
    /// other than letters, digits, `.`, `-` and `_`, credentials or a query string in the URL,
    /// or a prefix with empty, `.` or `..` segments or a control character.
    pub fn parse(text: &str) -> Result<StoreUrl, StoreError> {
        let invalid = |why: &str| StoreError::InvalidUrl {
            url: redact_url(text),
            why: why.to_owned(),
        };
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| invalid("expected scheme://bucket/prefix"))?;
        let scheme = SCHEMES
            .iter()
            .copied()
            .find(|known| *known == scheme)
            .ok_or_else(|| invalid("the scheme must be s3, gs or az"))?;
        if rest.contains('@') {
            return Err(invalid(
                "credentials do not belong in the URL: they are read from the environment",
            ));
        }
        if rest.contains('?') || rest.contains('#') {
            return Err(invalid("a query string or fragment is not allowed"));
        }
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(invalid("the bucket is missing"));
        }
        // The store's client reads the bucket as a URL's host, which drops a port and strips
        // tabs and line breaks: a bucket it would read differently is refused here.
        if let Some(bad) = bucket
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
        {
            return Err(invalid(&format!(
                "the bucket may hold only letters, digits, `.`, `-` and `_`, not {:?}",
                bad
            )));
        }
        if prefix.chars().any(char::is_control) {
            return Err(invalid("the prefix holds a control character"));
        }
        let prefix = prefix.trim_end_matches('/');
        let prefix = ObjectPath::parse(prefix).map_err(|error| invalid(&error.to_string()))?;
        Ok(StoreUrl {
            scheme,
            bucket: bucket.to_owned(),
            prefix,
        })
    }

    /// The URL of an object of this store.
    pub(super) fn object_url(&self, location: &ObjectPath) -> String {
        format!("{}://{}/{location}", self.scheme, self.bucket)
    }

    /// The store, configured from the environment.
    pub(super) fn connect(
        &self,
        options: &StoreOptions,
    ) -> Result<Arc<dyn ObjectStore>, StoreError> {
        let retry = RetryConfig {
            max_retries: options.max_retries,
            retry_timeout: options.retry_timeout,
            ..RetryConfig::default()
        };
        let root = format!("{}://{}", self.scheme, self.bucket);
        let built: object_store::Result<Arc<dyn ObjectStore>> = match self.scheme {
            "s3" => object_store::aws::AmazonS3Builder::from_env()
                .with_url(root)
                .with_retry(retry)
                .build()
                .map(|store| Arc::new(store) as Arc<dyn ObjectStore>),
            "gs" => object_store::gcp::GoogleCloudStorageBuilder::from_env()
                .with_url(root)
                .with_retry(retry)
                .build()
                .map(|store| Arc::new(store) as Arc<dyn ObjectStore>),
            _ => object_store::azure::MicrosoftAzureBuilder::from_env()
                .with_url(root)
                .with_retry(retry)
                .build()
                .map(|store| Arc::new(store) as Arc<dyn ObjectStore>),
        };
        built.map_err(|error| StoreError::Config {
            url: self.to_string(),
            message: describe(&error),
        })
    }

    pub(super) fn request(
        &self,
        location: &ObjectPath,
        action: &'static str,
    ) -> impl Fn(object_store::Error) -> StoreError + use<> {
        let url = self.object_url(location);
        move |error| StoreError::Request {
            url: url.clone(),
            action,
            message: describe(&error),
        }
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.bucket)?;
        if !self.prefix.as_ref().is_empty() {
            write!(f, "/{}", self.prefix)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::Shard;

    #[test]
    fn urls_parse_strictly_and_never_show_credentials() {
        let url = StoreUrl::parse("s3://bucket/a/b/").expect("a URL");
        assert_eq!(url.to_string(), "s3://bucket/a/b");
        assert_eq!(
            url.part(Shard::new(2, 5).expect("a shard")).as_ref(),
            "a/b/part-2-of-5"
        );
        assert_eq!(
            StoreUrl::parse("az://c").expect("a URL").to_string(),
            "az://c"
        );
        for bad in [
            "s3://",
            "s3:///x",
            "ftp://b/x",
            "s3://b/a//c",
            "s3://b/../x",
        ] {
            assert!(StoreUrl::parse(bad).is_err(), "{bad}");
        }
        for secret in [
            "s3://AKIA:hunter2@b/x",
            "az://c/x?sig=hunter2",
            "gs://b/x#hunter2",
        ] {
            let error = StoreUrl::parse(secret).expect_err(secret).to_string();
            assert!(!error.contains("hunter2"), "{error}");
        }
        assert!(!StoreUrl::is_url("./s3://b"));
        assert!(StoreUrl::is_url("gs://b"));
    }

    #[test]
    fn urls_the_client_would_read_as_another_bucket_are_refused_on_one_line() {
        for bad in [
            "s3://evals:9999/one.jsonl",
            "s3://ev\nals/one.jsonl",
            "gs://ev\tals/x",
            "s3://ev als/x",
            "az://c/a\nb",
            "s3://b/a\r",
        ] {
            let error = StoreUrl::parse(bad).expect_err(bad).to_string();
            assert!(
                !error.contains(['\n', '\r', '\t']),
                "{bad:?} gave {error:?}"
            );
            assert!(error.contains("not a usable object store URL"), "{error}");
        }
        assert_eq!(
            StoreUrl::parse("s3://my-bucket.v2_x/a")
                .expect("a URL")
                .to_string(),
            "s3://my-bucket.v2_x/a"
        );
    }
}
