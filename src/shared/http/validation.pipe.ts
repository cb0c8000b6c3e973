import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { ValidationError, validate } from 'class-validator';
import { invalidRequest } from '../kernel/errors/domain-error';

export function firstValidationError(errors: ValidationError[], parent = ''): { field: string; message: string } | undefined {
  for (const error of errors) {
    const field = /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : parent ? `${parent}.${error.property}` : error.property;
    const constraints = error.constraints ? Object.values(error.constraints) : [];
    if (constraints.length > 0) {
      // class-validator messages start with the property name; show the full path instead.
      const message = constraints[0].startsWith(error.property)
        ? field + constraints[0].slice(error.property.length)
        : `${field}: ${constraints[0]}`;
      return { field, message };
    }
    const nested = firstValidationError(error.children ?? [], field);
    if (nested) return nested;
  }
  return undefined;
}

const PRIMITIVES: unknown[] = [String, Boolean, Number, Array, Object];

/**
 * Validates bodies and queries against their DTO class. Unknown members are dropped, never
 * trusted; the first failure answers 400 invalid_request naming the field.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const metatype = metadata.metatype;
    if (!metatype || PRIMITIVES.includes(metatype) || (metadata.type !== 'body' && metadata.type !== 'query')) {
      return value;
    }
    if (metadata.type === 'body' && (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value))) {
      throw invalidRequest('Request body must be a JSON object', { field: 'body' });
    }
    const instance = plainToInstance(metatype as new () => object, value ?? {}, { enableImplicitConversion: false });
    const errors = await validate(instance, { whitelist: true, forbidUnknownValues: false, stopAtFirstError: true });
    const first = firstValidationError(errors);
    if (first) throw invalidRequest(first.message, { field: first.field });
    return instance;
  }
}
