/**
 * Jest setupFilesAfterEnv (each test file, once the framework is in place): the default timeout
 * of a test and a hook, 60 s on a quiet machine, stretched by the load when the file starts
 * (deadlines.ts). A test that names its own timeout keeps it.
 */
import { scaled } from './deadlines';

jest.setTimeout(scaled(60000));
