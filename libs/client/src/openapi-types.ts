/**
 * Bridges the generated OpenAPI types (src/generated, made at build time from docs/openapi/*.json) to the
 * client's handwritten surface. Where a document describes a response precisely, the client returns that
 * type; where it does not (a preliminary document without schemas), it falls back to the handwritten model
 * in custody-models.ts / verification-models.ts. So the client compiles against both kinds of document, and
 * its method names never depend on the document's operation ids. Request bodies use the handwritten input
 * types (from the contracts), so a caller's code does not change when a document is regenerated (documents
 * may, for instance, mark a server-defaulted field as required); `CustodyInput` and `VerificationInput` give
 * the document's own request types to callers who want them.
 */
import type { paths as CustodyPaths } from './generated/custody-api';
import type { paths as VerificationPaths } from './generated/verification-api';

export type { CustodyPaths, VerificationPaths };

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

type Operation<P, Path extends string, M extends Method> = Path extends keyof P
  ? M extends keyof P[Path]
    ? Exclude<P[Path][M], undefined>
    : never
  : never;

type JsonContent<R> = R extends { content: { 'application/json': infer B } } ? B : never;

type SuccessBody<O> = O extends { responses: infer R }
  ? JsonContent<R[Extract<keyof R, 200 | 201 | 202 | '200' | '201' | '202'>]>
  : never;

type RequestBody<O> = O extends { requestBody?: infer B } ? JsonContent<NonNullable<B>> : never;

/** T when the document says something precise, else the handwritten Fallback. */
export type Precise<T, Fallback> = [T] extends [never]
  ? Fallback
  : unknown extends T
    ? Fallback
    : T extends object
      ? string extends keyof T
        ? Fallback
        : T
      : T;

export type CustodyResult<Path extends string, M extends Method, Fallback> = Precise<
  SuccessBody<Operation<CustodyPaths, Path, M>>,
  Fallback
>;
export type CustodyInput<Path extends string, M extends Method, Fallback> = Precise<
  RequestBody<Operation<CustodyPaths, Path, M>>,
  Fallback
>;
export type VerificationResult<Path extends string, M extends Method, Fallback> = Precise<
  SuccessBody<Operation<VerificationPaths, Path, M>>,
  Fallback
>;
export type VerificationInput<Path extends string, M extends Method, Fallback> = Precise<
  RequestBody<Operation<VerificationPaths, Path, M>>,
  Fallback
>;

/** The item type of a `{items: T[]}` page, or the fallback. */
export type ItemOf<PageType, Fallback> = PageType extends { items: (infer I)[] }
  ? Precise<I, Fallback>
  : Fallback;
