import { carriesNonJsonBody } from './json-body';

describe('carriesNonJsonBody', () => {
  it('refuses a body in any media type but application/json', () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
    ]) {
      expect(carriesNonJsonBody({ 'content-type': type, 'content-length': '3' })).toBe(true);
    }
    expect(carriesNonJsonBody({ 'content-type': 'text/plain', 'transfer-encoding': 'chunked' })).toBe(true);
  });

  it('takes JSON with parameters, and requests without a body whatever their Content-Type', () => {
    expect(
      carriesNonJsonBody({ 'content-type': 'application/json; charset=utf-8', 'content-length': '2' }),
    ).toBe(false);
    expect(carriesNonJsonBody({ 'content-type': 'Application/JSON', 'content-length': '2' })).toBe(false);
    expect(carriesNonJsonBody({ 'content-type': 'text/plain', 'content-length': '0' })).toBe(false);
    expect(carriesNonJsonBody({})).toBe(false);
  });
});
