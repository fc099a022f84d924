// Package skills implements skills: reusable instruction packs, each a
// SKILL.md file, that the model loads with the skill tool and a user
// invokes as a slash command. It reproduces the reference agent's skill
// family (its local file system provider, its catalog and its skill tool)
// in the form reel takes; the engine wires it in.
//
// # Discovery
//
// [Discover] searches, for a session cwd, these roots in precedence order:
//
//	<project>/.reel/skills    project-reel   (reel's own)
//	<project>/.dsh/skills     project-dsh    (the reference's)
//	<project>/.agents/skills  project-agents (the reference's shared root)
//	<project>/.claude/skills  project-claude (Claude Code compatibility)
//	Options.Dirs              custom
//	$XDG_CONFIG_HOME/reel/skills (default ~/.config/reel/skills)  user-reel
//	~/.agents/skills          user-agents
//	~/.claude/skills          user-claude
//
// The project is the nearest directory from the cwd up holding ".git"
// (any kind of file), else the cwd itself; only the project directory is
// searched, not the directories between it and the cwd. In each root a
// skill is a directory <dir>/SKILL.md (the base directory of its
// resources is <dir>) or a flat file <name>.md (its base directory is the
// root); nothing deeper is searched, and the user-reel root's ".system"
// child is skipped. Entries are taken in byte order of their names (at
// most [MaxEntriesPerRoot] of them). When two skills declare the same
// name, the one of the earlier root wins, and in one root the one of the
// earlier entry; the loser is reported as a [Problem].
//
// Reads are bounded as the instruction files' are: a skill file is read
// with tools.ReadRegularFile, following symbolic links only to a regular
// file, never a FIFO, a device or a file of procfs or sysfs, and never
// more than Options.MaxFileBytes (1 MiB by default). A missing SKILL.md is
// no skill; a file that cannot be used is skipped and reported as a
// Problem (path, line, what). Discovery never fails: an unreadable root or
// file (not merely absent), or a cancelled context, makes the catalog
// incomplete ([Catalog.Complete]), which the engine should not publish
// over a catalog the model was shown.
//
// # Format
//
// A skill file begins with a line "---" (a UTF-8 byte order mark before
// it is ignored), then a YAML mapping, then a line "---"; the rest is the
// skill's instructions, trimmed of surrounding white space. Lines may end
// in CRLF. The keys read are:
//
//	name                      required; kebab-case: ^[a-z0-9]+(-[a-z0-9]+)*$
//	description               required; a non-empty string
//	whenToUse                 optional string (kept, never rendered)
//	disable-model-invocation  optional boolean: true hides the skill from
//	                          the catalog and the skill tool
//	user-invocable            optional boolean: false makes it no slash
//	                          command
//
// The name is never taken from the directory. A boolean is a YAML
// boolean, the number 1 or 0, or the string true/false, yes/no, on/off,
// 1/0 in any case; anything else, and the camel-case spellings
// disableModelInvocation, modelInvocable and userInvocable, reject the
// skill (an invocation policy fails closed). Other keys are allowed and
// ignored.
//
// The header is parsed by one parser of a YAML subset, which covers what
// skill files use: top-level "key: value" lines (keys plain or quoted;
// duplicates refused); values plain (one or more lines, continuation lines
// indented, folded by YAML's rules; typed by the YAML 1.2 core schema, so
// "true" is a boolean and "123" a number), single- or double-quoted (with
// YAML's escapes and line folding), block scalars (| and > with chomping
// and indentation indicators), flow collections ([…], {…}) and indented
// nested mappings and lists (kept opaque); comments. A plain value holding
// ": " is refused, as YAML refuses it. Anchors, aliases, tags, complex
// keys, directives and document markers inside the header are refused
// with a *[FrontmatterError] naming the line.
//
// # Catalog
//
// [Catalog.Message] is the first catalog of a session: a user/message
// "<system-reminder>\nA skill is a reusable set … \n\n<available_skills>\n
// - `NAME`: DESCRIPTION\n…</available_skills>\n\n… \n</system-reminder>",
// with the source [Catalog.Source](false):
// {"kind":"skill-catalog","form":"catalog","entries":[{"name","description"}…]}.
// It lists the model-visible skills in name order; a description has its
// white space runs collapsed to one space, is cut to
// Options.MaxDescription UTF-16 code units (500) ending in "...", and is
// escaped (&, <, >) in the text but not in the source. No catalog is
// injected while no skill is model-visible.
//
// The reference injects it at a step's start, after the step's other
// entered messages (the prompt, the runtime context, the workspace
// instructions), when no catalog was published in the session yet; at
// every later step it compares the [Catalog.Digest] with the newest
// catalog visible on the surface ([SourceDigest]) and, when they differ or
// none is visible any more (compaction), enters the complete replacement
// [Catalog.Update] with the source [Catalog.Source](true) ("update":true).
//
// # Loading
//
// The skill tool ([Tool], argument "name") and a user's invocation
// ([Catalog.Load]) read the skill's file again at each load and render
// [Content]: "<skill_content name=…>", the base directory and how to
// resolve paths against it in "<skill_resources>", the instructions in
// "<skill_instructions>". The tool refuses a skill with
// disable-model-invocation; Load one with user-invocable: false. A user
// invokes a skill with a word "/NAME" in a prompt ([InvokedNames]); the
// reference then enters the rendered skill as a user/message with the
// source [InvocationSource] after the step's other entered messages.
package skills
