// Package tsstrip erases TypeScript's erasable syntax from the body of a
// run_code program, so the JavaScript engine runs what remains — the same
// contract as the reference agent's type strip (Node's stripTypeScriptTypes,
// "erasable syntax only").
//
// Strip replaces every erased byte with a space (line terminators are kept),
// so the output has the input's length and every line and column of the
// code that remains: an error's line number is the line the model wrote.
// Where erasing a type would join two statements that TypeScript keeps
// apart (a statement ending in `as T` followed by a line starting with `(`,
// `[` or a template; an erased declaration), the first erased byte becomes
// `;` instead of a space.
//
// Erased: type annotations on variables, parameters, return types and class
// fields; optional `?` markers and definite `!` markers; `as T`,
// `satisfies T` and `as const`; the non-null `!`; type parameters and type
// arguments of functions, classes, methods, arrows, calls and `new`;
// `interface`, `type` aliases, `declare` statements and class members;
// `implements` clauses; the class-member modifiers public, private,
// protected, readonly, override, abstract and declare; a `this` parameter.
//
// Refused with an *Error (non-erasable syntax, or syntax this stripper
// cannot erase with certainty): enum, namespace and module declarations
// (a declare'd one is ambient, and erased with its statement),
// parameter properties, and angle-bracket type assertions (`<T>x`). A
// refusal is never a partial strip.
//
// The stripper reads tokens, not a full grammar. Two checks keep a
// misreading from changing a program's meaning silently: the output is
// tokenized again and must be exactly the input's kept tokens (a blank that
// turned a division into a regular expression, or opened a comment, is an
// error), and the stripper only ever erases whole tokens it read as type
// syntax.
package tsstrip
