/**
 * The DO block editing operations_type_check from its current definition, so that whatever other
 * migrations added stays: `add` puts `types` at the head of its ARRAY (a migration's up), `remove`
 * takes them out again (its down). One statement, its lines after the first indented for a
 * migration's query text (six spaces).
 */
export function editOperationTypes(edit: 'add' | 'remove', types: readonly string[]): string {
  const listed = types.map((t) => `''${t}''::text, `).join('');
  const replace = edit === 'add' ? `'ARRAY[', 'ARRAY[${listed}'` : `'${listed}', ''`;
  return `DO $do$
      DECLARE def text;
      BEGIN
        SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint WHERE conrelid = 'operations'::regclass AND conname = 'operations_type_check';
        EXECUTE 'ALTER TABLE operations DROP CONSTRAINT operations_type_check, ADD CONSTRAINT operations_type_check '
          || replace(def, ${replace});
      END $do$;`;
}
