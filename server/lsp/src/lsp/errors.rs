//! Errors of the server: a protocol [`ErrorKind`], a sentence naming the problem and, when it is
//! about a session, its revision. Converted to JSON-RPC errors here and nowhere else.

use serde_json::json;
use sessiontree_protocol::ErrorKind;
use tower_lsp_server::jsonrpc;

/// A failed request, ready to become a JSON-RPC error with `data.kind`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// What went wrong, for machines.
    pub kind: ErrorKind,
    /// What went wrong, for people.
    pub message: String,
    /// The session's revision, when the error is about one.
    pub revision: Option<u64>,
}

/// Server result.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// An error of a kind with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ApiError {
            kind,
            message: message.into(),
            revision: None,
        }
    }

    /// Attaches the session revision.
    pub fn at(mut self, revision: u64) -> Self {
        self.revision = Some(revision);
        self
    }

    /// Malformed or inconsistent params.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        ApiError::new(ErrorKind::InvalidParams, message)
    }

    /// A session that is not open.
    pub fn session_not_found(uri: &str) -> Self {
        ApiError::new(
            ErrorKind::SessionNotFound,
            format!("session {uri} is not open; call sessionTree/open first"),
        )
    }

    /// The session's actor is gone (closed while the request was queued).
    pub fn closed(uri: &str) -> Self {
        ApiError::new(
            ErrorKind::SessionNotFound,
            format!("session {uri} was closed"),
        )
    }
}

impl From<sessiontree_core::Error> for ApiError {
    fn from(err: sessiontree_core::Error) -> Self {
        let kind = ErrorKind::parse(err.kind()).unwrap_or(ErrorKind::Internal);
        ApiError::new(kind, err.to_string())
    }
}

impl From<ApiError> for jsonrpc::Error {
    fn from(err: ApiError) -> Self {
        let mut data = json!({ "kind": err.kind.as_str() });
        if let Some(revision) = err.revision {
            data["revision"] = revision.into();
        }
        jsonrpc::Error {
            code: jsonrpc::ErrorCode::from(err.kind.code()),
            message: err.message.into(),
            data: Some(data),
        }
    }
}
