//! Every request gets an answer, `$/` requests included.
//!
//! `tower-lsp-server` drops the MethodNotFound answer of every unknown method whose name starts
//! with `$/`, as LSP asks for notifications; but a *request* (it has an id) must be answered, and
//! a client would wait forever. This service around the library's answers those requests with
//! the MethodNotFound the library gives any other unknown method. Notifications pass as they are.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tower_lsp_server::jsonrpc::{Error, Request, Response};

/// The LSP service, with `$/` requests answered.
pub(crate) struct AnswerEveryRequest<S>(pub(crate) S);

type Answer<E> = Pin<Box<dyn Future<Output = Result<Option<Response>, E>> + Send>>;

impl<S> tower_service::Service<Request> for AnswerEveryRequest<S>
where
    S: tower_service::Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = Answer<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let unanswered = match request.id() {
            Some(id) if request.method().starts_with("$/") => {
                Some((id.clone(), request.method().to_owned()))
            }
            _ => None,
        };
        let answer = self.0.call(request);
        Box::pin(async move {
            Ok(match (answer.await?, unanswered) {
                (None, Some((id, method))) => {
                    let mut error = Error::method_not_found();
                    error.data = Some(method.into());
                    Some(Response::from_error(id, error))
                }
                (answer, _) => answer,
            })
        })
    }
}
