import { textoDoMembro } from './texto-json';

describe('textoDoMembro: the exact text of a top-level member', () => {
  test('When dados holds a 20-digit integer, then its text keeps every digit', () => {
    expect(textoDoMembro('{"a":1,"dados":{"n": 12345678901234567890123}}', 'dados')).toBe(
      '{"n": 12345678901234567890123}',
    );
  });

  test('When strings hold braces, quotes and escapes, then the value ends where JSON says', () => {
    const json = '{"x":"}\\"{","dados":["a\\\\",{"b":"]}"}],"z":null}';
    expect(textoDoMembro(json, 'dados')).toBe('["a\\\\",{"b":"]}"}]');
  });

  test('When dados appears twice or with an escaped name, then the last one wins, as with JSON.parse', () => {
    expect(textoDoMembro('{"dados":1,"d\\u0061dos":2}', 'dados')).toBe('2');
    expect(textoDoMembro(' { "dados" : true , "dados" : -1.5e3 } ', 'dados')).toBe('-1.5e3');
  });

  test('When a nested object has a member dados, then it is not the top-level one', () => {
    expect(textoDoMembro('{"outro":{"dados":1}}', 'dados')).toBeUndefined();
    expect(textoDoMembro('[{"dados":1}]', 'dados')).toBeUndefined();
  });

  test('When the text is any valid object, then the cut text parses to the same value as JSON.parse gives', () => {
    const valor = { a: [1, { b: 'c"}' }], dados: { x: [null, false, 'é\n'], y: { z: {} } }, w: 2 };
    const texto = JSON.stringify(valor, null, 2);
    expect(JSON.parse(textoDoMembro(texto, 'dados')!)).toEqual(valor.dados);
  });
});
