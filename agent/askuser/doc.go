// Package askuser is the ask_user_question tool: the model asks the user
// one or more questions and waits for the answers, which come back as the
// tool's result. The name, the arguments and the result texts are the
// reference agent's (its tool-ask-user and user-questions packages):
//
//	{"questions":[{"id","question","header"?,"detail"?,"options"?:[{"label","description"?}],"multi_select"?}]}
//
// answered as the JSON text {"answers":[{"id","selected":[labels],"custom"?}]},
// one answer per question in the order asked.
//
// # Who answers
//
// The tool asks an [Asker] it finds in the call's context ([NewContext]);
// the engine puts the prompt's client there. Without one the call is
// refused ("Error: no user-questions provider is registered: …"), and a
// subagent's call is refused as the reference refuses it (the child has no
// human answerer; it is told to put the question in its final result): the
// engine gives a child [Delegated]. The ACP adapter implements Asker with a
// form elicitation (elicitation/create) when the client advertises one;
// how a form is drawn and read back is the adapter's business, the
// checks of an answer against its questions are here ([Check]).
//
// # Bad input
//
// The arguments are parsed once, strictly ([ParseArgs]): a member given
// twice or spelled in another case, an unknown member, a wrong type, an
// empty or duplicate id, duplicate option labels, and text holding control
// characters other than newline and tab, or bidirectional-override
// characters (which could make a question read differently from what it
// asks), are refused with an error naming the question and the member; so
// are texts and lists over the bounds below. An answer that names an option
// its question does not offer, selects twice, selects more than one option
// of a single-select question, or answers a question that was not asked is
// refused by [Check] and the call fails with that reason; nothing the user
// did not choose reaches the model.
package askuser
