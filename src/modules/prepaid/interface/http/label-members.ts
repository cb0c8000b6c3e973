import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsObject, ValidateIf } from 'class-validator';
import { LABEL_KEY_RULE, MAX_LABEL_VALUE_LENGTH, MAX_LABELS } from '../../domain/labels';

/**
 * The optional `labels` member of a request body (volumes and servers alike): a map of string
 * values, checked further by the domain's label rules. `describe` words its description around
 * the rules (PATCH: "Replaces the whole map …"; a purchase: "… Default {}").
 */
export function LabelsMember(describe: (rules: string) => string, example: Record<string, string>): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'object',
      additionalProperties: { type: 'string', maxLength: MAX_LABEL_VALUE_LENGTH },
      maxProperties: MAX_LABELS,
      description: describe(`At most ${MAX_LABELS}; keys ${LABEL_KEY_RULE}; values strings of at most ${MAX_LABEL_VALUE_LENGTH} characters`),
      example,
    }),
    IsObject({ message: 'labels must be an object of string values' }),
    ValidateIf((body: { labels?: unknown }) => body.labels !== undefined),
    // The map as parsed: class-transformer would rebuild it and silently drop a "__proto__" key (a valid label key).
    Transform(({ obj }: { obj: { labels?: unknown } }) => obj.labels),
    // Copied as a plain map (not through the value's own `constructor`, which a label key may name).
    Type(() => Object),
  );
}

/** The optional `delete_protection` member of a request body (volumes and servers alike). */
export function DeleteProtectionMember(description: string, example: boolean): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ description, example }),
    IsBoolean({ message: 'delete_protection must be true or false' }),
    ValidateIf((body: { delete_protection?: unknown }) => body.delete_protection !== undefined),
  );
}
