/**
 * Tags queries (tree-sitter query language) for the languages the map parses, written for dissent
 * after the approach of aider's repo map: `@definition.KIND` marks a whole definition and `@name` its
 * name; `@reference` an identifier a file uses; `@import` a module specifier it imports. A change to
 * any query changes QUERY_VERSION, which is part of every cached extraction's key (ADR-032).
 */

/** Bumped whenever a query or the extractor changes what it extracts: old cached extractions stop matching. */
export const QUERY_VERSION = 1;

const TS_COMMON = `
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])) @definition.function
(variable_declaration (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])) @definition.function
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @definition.method
(assignment_expression left: (member_expression property: (property_identifier) @name) right: [(arrow_function) (function_expression)]) @definition.function
(pair key: (property_identifier) @name value: [(arrow_function) (function_expression)]) @definition.function
(program (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant)
(program (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant))

(call_expression function: (identifier) @reference)
(call_expression function: (member_expression property: [(property_identifier) (private_property_identifier)] @reference))
(new_expression constructor: (identifier) @reference)
(new_expression constructor: (member_expression property: (property_identifier) @reference))
(import_specifier name: (identifier) @reference)
(export_specifier name: (identifier) @reference)

(import_statement source: (string (string_fragment) @import))
(export_statement source: (string (string_fragment) @import))
(call_expression function: (identifier) @_require arguments: (arguments . (string (string_fragment) @import)) (#eq? @_require "require"))
(call_expression function: (import) arguments: (arguments . (string (string_fragment) @import)))
`;

const TS_TYPES = `
(function_signature name: (identifier) @name) @definition.function
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(method_signature name: (property_identifier) @name) @definition.method
(abstract_method_signature name: (property_identifier) @name) @definition.method
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(internal_module name: (identifier) @name) @definition.module

(type_identifier) @reference
(extends_clause value: (identifier) @reference)
(implements_clause (type_identifier) @reference)
(extends_type_clause (type_identifier) @reference)
`;

const JSX = `
(jsx_opening_element name: (identifier) @reference)
(jsx_self_closing_element name: (identifier) @reference)
`;

const JS_ONLY = `
(class_declaration name: (identifier) @name) @definition.class
(class name: (identifier) @name) @definition.class
(class_heritage (identifier) @reference)
`;

const PYTHON = `
(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(module (expression_statement (assignment left: (identifier) @name)) @definition.constant)

(call function: (identifier) @reference)
(call function: (attribute attribute: (identifier) @reference))
(class_definition superclasses: (argument_list (identifier) @reference))
(class_definition superclasses: (argument_list (attribute attribute: (identifier) @reference)))
(decorator (identifier) @reference)
(decorator (attribute attribute: (identifier) @reference))
(type (identifier) @reference)
(import_from_statement name: (dotted_name (identifier) @reference))
(import_from_statement name: (aliased_import name: (dotted_name (identifier) @reference)))

(import_from_statement module_name: (dotted_name) @import)
(import_from_statement module_name: (relative_import) @import)
(import_statement name: (dotted_name) @import)
(import_statement name: (aliased_import name: (dotted_name) @import))
`;

const GO = `
(function_declaration name: (identifier) @name) @definition.function
(method_declaration name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name) @definition.type
(method_elem name: (field_identifier) @name) @definition.method
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.constant))

(call_expression function: (identifier) @reference)
(call_expression function: (selector_expression field: (field_identifier) @reference))
(type_identifier) @reference

(import_spec path: (interpreted_string_literal (interpreted_string_literal_content) @import))
`;

const RUST = `
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.method
(struct_item name: (type_identifier) @name) @definition.class
(enum_item name: (type_identifier) @name) @definition.enum
(union_item name: (type_identifier) @name) @definition.class
(trait_item name: (type_identifier) @name) @definition.interface
(type_item name: (type_identifier) @name) @definition.type
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant

(call_expression function: (identifier) @reference)
(call_expression function: (field_expression field: (field_identifier) @reference))
(call_expression function: (scoped_identifier name: (identifier) @reference))
(macro_invocation macro: (identifier) @reference)
(type_identifier) @reference

(use_declaration argument: (_) @import)
`;

const JAVA = `
(class_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.interface
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method

(method_invocation name: (identifier) @reference)
(object_creation_expression type: (type_identifier) @reference)
(type_identifier) @reference
(marker_annotation name: (identifier) @reference)
(annotation name: (identifier) @reference)

(import_declaration (scoped_identifier) @import)
`;

/** Each parsed language's query. */
export const QUERIES = {
  typescript: TS_COMMON + TS_TYPES,
  tsx: TS_COMMON + TS_TYPES + JSX,
  javascript: TS_COMMON + JS_ONLY + JSX,
  python: PYTHON,
  go: GO,
  rust: RUST,
  java: JAVA,
} as const;

/** A language the map parses with tree-sitter. */
export type ParsedLanguage = keyof typeof QUERIES;
