package agent

import (
	"context"
	"errors"

	"github.com/reel-agent/reel/sessionlog"
)

// Why a question was not put to the client (askApproval's errors).
var (
	// errPolicyNever: the session's approval policy is never.
	errPolicyNever = errors.New("the approval policy of this session is never")
	// errNoApprover: the session's client approves nothing.
	errNoApprover = errors.New("no one can approve it in this session")
)

// askApproval puts one question about a call to the client's approver,
// with the audit pair dsh writes around every question: approval/asked
// (tool, call, reason) before it, approval/decided (the outcome) after.
// Under the approval policy never the answer is Rejected without asking
// (errPolicyNever), without an approver it is unavailable (errNoApprover);
// both are logged. A question whose answer cannot be logged is not
// answered: an unlogged decision would break the pair.
func (r *run) askApproval(ctx context.Context, a Approval, reason string) (Answer, error) {
	s, e := r.s, r.e
	wctx := context.WithoutCancel(ctx)
	id := e.newID()
	if _, err := s.emit(wctx, e.now(), sessionlog.TypeApprovalAsked,
		sessionlog.ApprovalAskedData{ID: id, ToolName: a.Call.Name, CallID: a.Call.ID, Reason: reason,
			MCPServer: a.MCPServer, MCPTool: a.MCPTool}, nil, nil); err != nil {
		return Dismissed, err
	}
	var ans Answer
	var err error
	switch {
	case s.approval() == ApprovalNever:
		ans, err = Rejected, errPolicyNever
	case r.c.Approver == nil:
		ans, err = Dismissed, errNoApprover
	default:
		ans, err = r.c.Approver.Approve(ctx, a)
	}
	if _, lerr := s.emit(wctx, e.now(), sessionlog.TypeApprovalDecided,
		sessionlog.ApprovalDecidedData{ID: id, Outcome: outcome(ctx, ans, err)}, nil, nil); lerr != nil {
		return Dismissed, lerr
	}
	return ans, err
}

// outcome is the approval/decided outcome of an answer.
func outcome(ctx context.Context, ans Answer, err error) string {
	switch {
	case errors.Is(err, errPolicyNever):
		return sessionlog.OutcomeRejected
	case err != nil && ctx.Err() != nil:
		return sessionlog.OutcomeCancelled
	case err != nil:
		return sessionlog.OutcomeUnavailable
	}
	switch ans {
	case Allowed:
		return sessionlog.OutcomeAllowedOnce
	case AllowedAlways:
		return sessionlog.OutcomeAllowedAlways
	case Rejected:
		return sessionlog.OutcomeRejected
	case RejectedAlways:
		return sessionlog.OutcomeRejectedAlways
	}
	return sessionlog.OutcomeCancelled
}
